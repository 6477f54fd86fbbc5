// h2o inspect: what a GGUF file holds and how much memory running it takes.
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli_common.h"
#include "cli_errors.h"
#include "commands.h"
#include "gguf/value.h"
#include "kv/kv_cache.h"
#include "kv/kv_report.h"
#include "kv/kv_spec.h"
#include "runtime/kv_config.h"

namespace h2o::cli {
namespace {

struct InspectFlags {
  std::string model_path;
  int32_t n_ctx = 0;
  std::string kv_type = "f16";
  std::string kv_type_k, kv_type_v;  // -ctk/-ctv; empty: kv_type
  std::string kv_spec = "full";
  int32_t chunk = 1;
  bool all_tensors = false;
};

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s;
}

// Every tensor whose type h2o cannot run (IQ*, TQ*, ...), whether or not the
// table above showed it: such a file opens and is described, but not run.
void PrintUnrunnableTensors(const gguf::File& file) {
  size_t count = 0;
  for (const gguf::TensorInfo& t : file.tensors()) count += IsRunnable(t.type) ? 0 : 1;
  if (count == 0) return;
  std::printf("\ntensors of types h2o cannot run (%zu; it runs %s):\n", count,
              RunnableTypeNames().c_str());
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (!IsRunnable(t.type)) {
      std::printf("  %-32s %s\n", t.name.c_str(), std::string(TraitsOf(t.type).name).c_str());
    }
  }
}

int RunInspect(const InspectFlags& f) {
  auto kv_types = KvElementTypes(f.kv_type, f.kv_type_k, f.kv_type_v);
  if (!kv_types.ok()) return Fail(kv_types.status());
  auto spec = ParseKvSpec(f.kv_spec);
  if (!spec.ok()) return Fail(spec.status().WithContext("--kv"));
  auto file_result = gguf::File::Open(f.model_path);
  if (!file_result.ok()) return Fail(file_result.status());
  const gguf::File& file = **file_result;
  // Everything that can fail is checked before anything is printed.
  // Sizes and estimates only: nothing is computed, so nothing is repacked.
  auto model = Model::Load(f.model_path, {.repack = false});
  int32_t n_ctx = 0;
  std::optional<KvPlan> plan;
  if (model.ok()) {
    n_ctx = f.n_ctx > 0 ? f.n_ctx : (*model)->hparams().n_ctx_train;
    // Percentages refer to the prompt; here the context plays that role.
    auto resolved = ResolveKvSpec(*spec, n_ctx);
    if (!resolved.ok()) return Fail(resolved.status().WithContext("--kv"));
    plan = std::move(resolved).value();
    if (Status s = CheckKvTypes(*kv_types, (*model)->hparams().head_dim); !s.ok()) return Fail(s);
  }

  std::printf("file: %s (GGUF v%u, %s, alignment %u)\n", file.path().c_str(), file.version(),
              FormatBytes(file.file_size()).c_str(), file.alignment());
  std::printf("\nmetadata (%zu keys):\n", file.metadata().size());
  for (const gguf::KeyValue& kv : file.metadata()) {
    std::printf("  %-44s %-8s %s\n", kv.key.c_str(),
                std::string(gguf::ValueTypeName(kv.value.type())).c_str(),
                gguf::FormatValue(kv.value).c_str());
  }

  size_t weight_bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors()) weight_bytes += t.nbytes;
  std::printf("\ntensors (%zu, %s):\n", file.tensors().size(), FormatBytes(weight_bytes).c_str());
  const size_t shown =
      f.all_tensors ? file.tensors().size() : std::min<size_t>(file.tensors().size(), 24);
  for (size_t i = 0; i < shown; ++i) {
    const gguf::TensorInfo& t = file.tensors()[i];
    std::printf("  %-32s %-5s %-18s %s\n", t.name.c_str(),
                std::string(TraitsOf(t.type).name).c_str(), Dims(t.dims).c_str(),
                FormatBytes(t.nbytes).c_str());
  }
  if (shown < file.tensors().size()) {
    std::printf("  ... %zu more (--all-tensors lists them)\n", file.tensors().size() - shown);
  }
  PrintUnrunnableTensors(file);

  if (!model.ok()) {
    // Inspecting a file this engine cannot run still succeeds.
    std::printf("\nnot runnable here: %s\n", model.status().message().c_str());
    return 0;
  }
  const HParams& hp = (*model)->hparams();
  std::printf("\nmodel: %s, %d layers, n_embd %d, %d heads (%d KV heads, head_dim %d), n_ff %d, "
              "vocab %d, trained context %d\n",
              hp.arch.c_str(), hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.head_dim,
              hp.n_ff, hp.n_vocab, hp.n_ctx_train);
  // What a session of this context and chunk allocates (runtime/kv_config.h),
  // as generate, perplexity and bench print it (kv/kv_report.h), against a
  // full cache of the whole context; a full policy is the latter itself.
  const KvCacheConfig c = SessionKvConfig(hp, *plan, n_ctx, f.chunk, false, *kv_types);
  auto policy = MakePolicy(*plan, n_ctx);
  std::printf("memory: weights %s (mapped)\n", FormatBytes(weight_bytes).c_str());
  std::printf("KV cache (%s, %s) with chunk %d: %s\n", plan->Describe().c_str(),
              kv_types->Name().c_str(), f.chunk, DescribeKvVsFull(c, *policy, n_ctx).c_str());
  return 0;
}

}  // namespace

Command RegisterInspect(CLI::App& app) {
  auto f = std::make_shared<InspectFlags>();
  CLI::App* cmd = app.add_subcommand("inspect", "show a GGUF file's metadata, tensors and memory needs");
  cmd->add_option("model,-m,--model", f->model_path, "GGUF file")->required();
  cmd->add_option("-c,--ctx-size", f->n_ctx, "context for the KV estimate (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  AddKvTypeOptions(*cmd, f->kv_type, f->kv_type_k, f->kv_type_v);
  cmd->add_option("--kv", f->kv_spec, "KV policy and budget to estimate (percentages of -c)")
      ->check(OnePolicy("inspect"))
      ->capture_default_str();
  cmd->add_option("--chunk", f->chunk, "tokens per forward pass for the estimate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--all-tensors", f->all_tensors, "list every tensor");
  return {cmd, [f] { return RunInspect(*f); }};
}

}  // namespace h2o::cli
