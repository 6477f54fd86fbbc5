// h2o convert: other checkpoint formats -> GGUF.
#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "cli_log.h"
#include "commands.h"
#include "convert/llama2c.h"

namespace h2o::cli {

Command RegisterConvert(CLI::App& app) {
  auto flags = std::make_shared<Llama2cConvertOptions>();
  auto format = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("convert", "convert a checkpoint to GGUF");
  cmd->add_option("format", *format, "source format (llama2c)")
      ->required()
      ->check(CLI::IsMember({"llama2c"}));
  cmd->add_option("input,-m,--model", flags->checkpoint_path,
                  "checkpoint file (llama2.c model.bin)")
      ->required();
  cmd->add_option("--tokenizer", flags->tokenizer_path, "llama2.c tokenizer.bin");
  cmd->add_option("-o,--output", flags->output_path, "output GGUF file")->required();
  cmd->add_option("--name", flags->name, "general.name to record")->capture_default_str();
  // `format` must live as long as the parser writes into it.
  return {cmd, [flags, format] {
            const Status s = ConvertLlama2c(*flags);
            if (!s.ok()) return Fail(s);
            if (flags->tokenizer_path.empty()) {
              Warn("no --tokenizer: the GGUF has no vocabulary, so it takes and gives token "
                   "ids only (generate --tokens, perplexity --token-file)");
            }
            Note("wrote {}", flags->output_path);
            return 0;
          }};
}

}  // namespace h2o::cli
