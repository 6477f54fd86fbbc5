// The subcommands of `h2o`. Each Register* adds its subcommand to `app` and
// returns it with the function that runs it (returning the process exit
// code) once the command line has been parsed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace h2o::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command RegisterGenerate(CLI::App& app);
Command RegisterPerplexity(CLI::App& app);
Command RegisterTokenize(CLI::App& app);
Command RegisterInspect(CLI::App& app);
Command RegisterConvert(CLI::App& app);
Command RegisterBench(CLI::App& app);
Command RegisterMkModel(CLI::App& app);
Command RegisterMkTask(CLI::App& app);
Command RegisterAnalyze(CLI::App& app);
Command RegisterEval(CLI::App& app);
Command RegisterServe(CLI::App& app);
Command RegisterChat(CLI::App& app);

}  // namespace h2o::cli
