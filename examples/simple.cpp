// Greedy generation through the C++ interface: prints the prompt's ids and
// the generated ones, as `h2o generate --temp 0 --print-ids` does.
//   simple_cpp MODEL PROMPT N [KV]
#include <cstdio>
#include <string>
#include <vector>

#include <h2o/h2o.hpp>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL PROMPT N [KV]\n", argv[0]);
    return 2;
  }
  try {
    const h2o::Model model = h2o::Model::Load(argv[1]);
    h2o::SessionParams params;
    if (argc > 4) params.kv = argv[4];
    h2o::Session session(model, params);
    const std::vector<int32_t> prompt = model.Tokenize(argv[2]);
    h2o::GenerateParams gen;  // greedy
    gen.max_tokens = std::stoi(argv[3]);
    std::string line;
    for (int32_t id : prompt) line += (line.empty() ? "" : " ") + std::to_string(id);
    for (int32_t id : session.Generate(prompt, gen)) line += " " + std::to_string(id);
    std::printf("%s\n", line.c_str());
    const h2o::KvStats kv = session.kv_stats();
    std::fprintf(stderr, "KV (%s): %zu bytes allocated, a full cache of %d tokens needs %zu\n",
                 kv.policy.c_str(), kv.allocated_bytes, session.n_past(), kv.full_cache_bytes);
  } catch (const h2o::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
