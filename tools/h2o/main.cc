// `h2o`: run, evaluate and inspect GGUF models with an H2O KV cache.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "cli_errors.h"
#include "cli_log.h"
#include "commands.h"
#include "llama_aliases.h"
#include "version.h"

int main(int original_argc, char** original_argv) {
  h2o::cli::RewrittenArgs rewritten = h2o::cli::RewriteLlamaAliases(
      std::vector<std::string>(original_argv, original_argv + original_argc));
  for (const std::string& warning : rewritten.warnings) h2o::cli::Warn(warning);
  std::vector<std::string>& args = rewritten.args;
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  const int argc = static_cast<int>(arg_pointers.size());
  char** argv = arg_pointers.data();

  CLI::App app{"h2o.cpp: LLM inference with a Heavy-Hitter Oracle (H2O) KV cache"};
  app.name("h2o");
  app.require_subcommand(1);
  // Before the subcommands: they inherit it.
  app.formatter(h2o::cli::MakeHelpFormatter());
  const h2o::cli::Command commands[] = {
      h2o::cli::RegisterGenerate(app), h2o::cli::RegisterPerplexity(app),
      h2o::cli::RegisterTokenize(app), h2o::cli::RegisterInspect(app),
      h2o::cli::RegisterConvert(app),
      h2o::cli::RegisterBench(app),
      h2o::cli::RegisterMkModel(app),
      h2o::cli::RegisterMkTask(app),
      h2o::cli::RegisterAnalyze(app),
      h2o::cli::RegisterEval(app),
      h2o::cli::RegisterServe(app),
      h2o::cli::RegisterChat(app),
  };

  app.set_version_flag("--version", h2o::cli::VersionText(), "print the version, commit, compiler "
                                                             "and SIMD kernels, then exit");
  for (const h2o::cli::Command& command : commands) h2o::cli::AddQuietFlags(*command.app);

  // Usage errors exit 2, runtime errors (Fail) 1. `h2o` alone: the usage.
  if (argc <= 1) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  // CLI11 would report an unknown command word as a missing subcommand.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const h2o::cli::Command& command : commands) {
      known = known || command.app->get_name() == argv[1];
      if (!names.empty()) names += ", ";
      names += command.app->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "h2o: error: unknown command '%s' (commands: %s; see 'h2o --help')\n",
                   argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string where = "h2o";
    CLI::App* command = &app;
    for (CLI::App* sub : app.get_subcommands()) {
      where += " " + sub->get_name();
      command = sub;
    }
    std::fflush(stdout);
    std::fprintf(stderr, "h2o: error: %s (see '%s --help')\n",
                 h2o::cli::DescribeParseError(e, app, *command).c_str(), where.c_str());
    return 2;
  }
  for (const h2o::cli::Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return 1;
}
