// CLI11's parse errors and help, in h2o's words: one line that names the
// flag ("-n/--n-predict"), what it got and what it takes.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace h2o::cli {

// "-n/--n-predict": every name of the option, short ones first.
std::string FlagNames(const CLI::Option& option);

// The message of a CLI11 parse error, rewritten for `command` (the parsed
// subcommand, or the top-level app): e.g. "Value -5 not in range 0.000000
// to 1.79769e+308" becomes "-n/--n-predict: -5 is not allowed (0 or more)".
std::string DescribeParseError(const CLI::ParseError& error, CLI::App& app, CLI::App& command);

// Help without CLI11's raw annotations: types as "INT (0 or more)",
// defaults as "(default: 128)" in the description, negated flags as
// "--kl, --no-kl", excluded options as "not with --tokens".
std::shared_ptr<CLI::Formatter> MakeHelpFormatter();

// Makes parsing fail unless exactly one of the options was given: "<what>
// is required" without any, "-f/--file and -p/--prompt cannot be used
// together" with two. Sets the command's parse callback.
void RequireOneOf(CLI::App& cmd, const std::vector<std::string>& options, const std::string& what);

// For --kv of a command that runs one policy: ParseKvSpec's error, so a bad
// spec is a usage error (exit 2) before anything loads; a comma-separated
// list of policies fails as "'full,h2o:...' is a list of 2 policies;
// <command> takes one (a list is for perplexity, eval and bench)".
CLI::Validator OnePolicy(const std::string& command);

// For commands with a --kv list and --budget: ExpandKvSweep's error when
// parsing completes (exit 2). The strings must outlive parsing.
void CheckKvSweepWhenParsed(CLI::App& cmd, const std::string* kv_list,
                            const std::string* budget_list);

}  // namespace h2o::cli
