#include "tokenizer/vocab_variant.h"

#include "gguf/writer.h"

namespace h2o {

Status WriteVocabVariant(const gguf::File& source, const VocabVariant& variant,
                         const std::string& path) {
  constexpr std::string_view kPre = "tokenizer.ggml.pre";
  constexpr std::string_view kAddBos = "tokenizer.ggml.add_bos_token";
  constexpr std::string_view kAddEos = "tokenizer.ggml.add_eos_token";
  gguf::Writer writer;
  for (const gguf::KeyValue& kv : source.metadata()) {
    if (kv.key == kAddBos || kv.key == kAddEos) continue;
    writer.Set(kv.key, kv.value);
  }
  writer.SetString(std::string(kPre), variant.pre);
  if (variant.add_bos) writer.SetBool(std::string(kAddBos), *variant.add_bos);
  if (variant.add_eos) writer.SetBool(std::string(kAddEos), *variant.add_eos);
  return writer.Write(path);
}

}  // namespace h2o
