// Grammar-constrained generation end to end: sampled at temperature 1 from
// the bundled model and from random-weight models (the bundled vocabulary,
// and Llama 3's byte-level one, whose pieces split UTF-8 characters), every
// output of a bounded schema ends by itself and is valid against it, as a
// validator written here checks it; every json_object output parses as an
// object, or is cut by the token limit where a JSON parser finds only that
// the input ended.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "model/model.h"
#include "q8_model.h"
#include "runtime/generate.h"
#include "runtime/session.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o {
namespace {

using nlohmann::json;

constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 6},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["red", "green", 7]}, "maxItems": 3},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "ok"]
})";

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// kSchema's rules, checked on the parsed value; "" when it holds.
std::string Invalid(const json& v) {
  if (!v.is_object()) return "not an object";
  for (const auto& [key, unused] : v.items()) {
    if (key != "name" && key != "age" && key != "tags" && key != "ok") return "extra " + key;
  }
  if (!v.contains("name") || !v["name"].is_string()) return "name";
  if (CodePoints(v["name"].get<std::string>()) > 6) return "name too long";
  if (!v.contains("ok") || !v["ok"].is_boolean()) return "ok";
  if (v.contains("age") && !v["age"].is_number_integer()) return "age";
  if (v.contains("tags")) {
    if (!v["tags"].is_array() || v["tags"].size() > 3) return "tags";
    for (const json& t : v["tags"]) {
      if (t != "red" && t != "green" && t != 7) return "tag " + t.dump();
    }
  }
  return "";
}

std::shared_ptr<const Grammar> GrammarOf(const std::string& gbnf) {
  auto g = ParseGbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::make_shared<const Grammar>(std::move(g).value());
}

struct Sampled {
  std::string text;
  GenerationEnd end;
};

std::vector<Sampled> Sample(const Model& model, const std::shared_ptr<const Grammar>& grammar,
                            int32_t max_tokens, int n_seeds) {
  const Tokenizer tokenizer(LoadVocabFromGguf(model.file()).value());
  SessionOptions so;
  so.n_ctx = 512;
  so.n_threads = 2;
  auto session = Session::Create(model, so);
  EXPECT_TRUE(session.ok()) << session.status().message();
  const std::vector<int32_t> prompt = tokenizer.Encode("Once upon a time", true);
  std::vector<Sampled> out;
  for (int seed = 1; seed <= n_seeds; ++seed) {
    (*session)->Reset();
    GenerateOptions o;
    o.max_tokens = max_tokens;
    o.sampling.temperature = 1.0f;
    o.sampling.top_k = 0;
    o.sampling.top_p = 1.0f;
    o.sampling.seed = static_cast<uint64_t>(seed);
    o.grammar = grammar;
    auto g = Generate((*session)->engine(), (*session)->sequence(), prompt, o, &tokenizer);
    EXPECT_TRUE(g.ok()) << g.status().message();
    if (g.ok()) out.push_back({g->text, g->finish_reason});
  }
  return out;
}

// A random-weight model with Llama 3's vocabulary (128256 byte-level BPE
// tokens).
const Model& Llama3VocabModel() {
  static const testing::WrittenRandomModel written("llama3_vocab", [] {
    MkModelOptions o;
    o.n_embd = 64;
    o.n_layer = 1;
    o.n_head = 2;
    o.n_head_kv = 1;
    o.n_ff = 128;
    o.n_ctx = 512;
    o.type = "q8_0";
    o.vocab_from = testing::DataPath("tokenizers/llama3-vocab.gguf");
    o.n_threads = 2;
    return o;
  }());
  return *written.model;
}

const Model& Bundled() {
  static const std::unique_ptr<Model> model = std::move(Model::Load(testing::ModelPath()).value());
  return *model;
}

void ExpectValidAgainstTheSchema(const Model& model, int n_seeds) {
  const auto grammar = GrammarOf(JsonSchemaToGbnf(json::parse(kSchema)).value());
  for (const Sampled& s : Sample(model, grammar, 400, n_seeds)) {
    // Bounded: every value has a most length, so it ends on its own.
    EXPECT_NE(s.end, GenerationEnd::kLength) << s.text;
    const json v = json::parse(s.text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(v.is_discarded()) << "not JSON: " << s.text;
    EXPECT_EQ(Invalid(v), "") << s.text;
  }
}

void ExpectJsonObjects(const Model& model, int n_seeds) {
  const auto grammar = GrammarOf(JsonObjectGbnf());
  for (const Sampled& s : Sample(model, grammar, 120, n_seeds)) {
    try {
      EXPECT_TRUE(json::parse(s.text).is_object()) << s.text;
      EXPECT_NE(s.end, GenerationEnd::kLength) << s.text;
    } catch (const json::parse_error& e) {
      // Cut by the limit: the parser runs out of input, nothing worse.
      EXPECT_EQ(s.end, GenerationEnd::kLength) << e.what() << "\n" << s.text;
      EXPECT_GE(e.byte, s.text.size()) << e.what() << "\n" << s.text;
    }
  }
}

TEST(GrammarGeneration, BundledModelWritesValidJson) {
  ExpectValidAgainstTheSchema(Bundled(), 8);
  ExpectJsonObjects(Bundled(), 4);
}

TEST(GrammarGeneration, RandomWeightsWriteValidJson) {
  ExpectValidAgainstTheSchema(testing::Q8Model(), 8);
  ExpectJsonObjects(testing::Q8Model(), 4);
}

TEST(GrammarGeneration, RandomWeightsWithLlama3VocabularyWriteValidJson) {
  ExpectValidAgainstTheSchema(Llama3VocabModel(), 4);
  ExpectJsonObjects(Llama3VocabModel(), 2);
}

TEST(GrammarGeneration, AGbnfGrammarIsFollowedAndEndsTheGeneration) {
  const auto grammar = GrammarOf("root ::= (\" \" [a-z]+){3} \".\"");
  for (const Sampled& s : Sample(Bundled(), grammar, 100, 4)) {
    EXPECT_EQ(s.end, GenerationEnd::kEndOfGeneration) << s.text;
    ASSERT_FALSE(s.text.empty());
    EXPECT_EQ(s.text.back(), '.') << s.text;
    int words = 0;
    for (size_t i = 0; i + 1 < s.text.size(); ++i) {
      const char c = s.text[i];
      if (c == ' ') {
        ++words;
      } else {
        EXPECT_TRUE(c >= 'a' && c <= 'z') << s.text;
      }
    }
    EXPECT_EQ(words, 3) << s.text;
  }
}

}  // namespace
}  // namespace h2o
