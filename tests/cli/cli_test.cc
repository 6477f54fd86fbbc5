// The `h2o` command as a user meets it: outputs of the real binary, and one
// clear error line with a non-zero exit for every kind of bad input.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST(Cli, GenerateGreedyPrintsTheLilyStory) {
  const auto r = RunH2o("generate -m " + kModel + " -p 'Once upon a time' -n 100 --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Once upon a time, there was a little girl named Lily. She loved to play "
                        "outside in the park. One day, she saw a big, red ball.",
                        0),
            0u)
      << r.out;
}

TEST(Cli, GenerateTokenIdsMatchReference) {
  for (const auto& c : testing::ReadJson("stories260K/reference_greedy.json")) {
    if (c["policy"] != "full") continue;
    const std::string prompt = testing::JoinIds(c["prompt"].get<std::vector<int32_t>>());
    const auto r = RunH2o("generate -m " + kModel + " --tokens '" + prompt + "' -n " +
                          std::to_string(c["n_predict"].get<int>()) + " --temp 0 --print-ids");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string expected = testing::JoinIds(c["expected_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(r.out, expected + "\n");
  }
}

TEST(Cli, SameSeedSameSample) {
  const std::string cmd =
      "generate -m " + kModel + " -p 'Once' -n 40 --temp 1 --seed 7 --print-ids";
  const auto a = RunH2o(cmd);
  const auto b = RunH2o(cmd);
  const auto c = RunH2o("generate -m " + kModel + " -p 'Once' -n 40 --temp 1 --seed 8 --print-ids");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST(Cli, PerplexityJsonMatchesReference) {
  const auto ref = testing::ReadJson("stories260K/reference_nll.json")[0];
  std::string files;
  for (const auto& s : ref["per_stream"]) {
    files.append(" ").append(
        testing::DataPath("stories260K/streams/" + s["stream"].get<std::string>()));
  }
  const auto r = RunH2o("perplexity -m " + kModel + " --json --kv-type f32 --token-file" + files);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json["policies"].size(), 1u);
  const auto& out = json["policies"][0];
  EXPECT_EQ(out["kv"], "full");
  EXPECT_EQ(out["tokens"], ref["tokens"]);
  EXPECT_NEAR(out["nll_sum"].get<double>(), ref["nll_sum"].get<double>(),
              1e-3 * ref["nll_sum"].get<double>());
  ASSERT_EQ(out["per_stream"].size(), ref["per_stream"].size());
  for (size_t i = 0; i < ref["per_stream"].size(); ++i) {
    EXPECT_EQ(out["per_stream"][i]["stream"], ref["per_stream"][i]["stream"]);
    EXPECT_NEAR(out["per_stream"][i]["nll_sum"].get<double>(),
                ref["per_stream"][i]["nll_sum"].get<double>(),
                1e-3 * ref["per_stream"][i]["nll_sum"].get<double>());
  }
  EXPECT_GT(out["kv_bytes"].get<double>(), 0);
  EXPECT_GT(out["kv_bytes_full"].get<double>(), 0);
}

TEST_F(TempDir, TokenizeMatchesReferenceIds) {
  // The independent tokenizer's ids for BOS + each story, through a file as
  // a user passes it (a few stories: the tokenizer tests cover all 56).
  const auto ref = testing::ReadJson("reference_tokens.json");
  ASSERT_GE(ref.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const std::string text = Path("story.txt");
    std::ofstream(text) << ref[i]["text"].get<std::string>();
    const auto r = RunH2o("tokenize -m " + kModel + " -f " + text);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, testing::JoinIds(ref[i]["ids"].get<std::vector<int32_t>>()) + "\n") << "story " << i;
  }
}

TEST(Cli, InspectShowsMetadataTensorsAndMemory) {
  const auto r = RunH2o("inspect " + kModel);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("general.architecture"), std::string::npos);
  EXPECT_NE(r.out.find("blk.0.attn_q.weight"), std::string::npos);
  EXPECT_NE(r.out.find("KV cache"), std::string::npos);
}

TEST(Cli, HelpExitsZero) {
  const auto r = RunH2o("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("generate"), std::string::npos);
  const auto g = RunH2o("generate --help");
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_NE(g.out.find("--top-p"), std::string::npos);
}

TEST(CliErrors, UnknownCommand) {
  testing::ExpectUsageError(RunH2o("fly -m x"), "unknown command 'fly'");
}
// h2o serve checks its flags and the model before it listens.
// The bundled model's GGUF has no chat template: chat asks for one.
TEST(CliErrors, ChatWithoutATemplate) {
  ExpectOneErrorLine(RunH2o("chat -m " + kModel),
                     "has no chat template h2o recognizes; name one with --chat-template");
}
TEST(CliErrors, ServeBadFlags) {
  ExpectOneErrorLine(RunH2o("serve -m " + kModel + " --kv bogus:k=1"), "--kv");
  ExpectOneErrorLine(RunH2o("serve -m " + kModel + " --kv-mem lots"), "--kv-mem");
  ExpectUsageError(RunH2o("serve -m " + kModel + " --port 70000"),
                   "--port: 70000 is not allowed (0 to 65535)");
  ExpectOneErrorLine(RunH2o("serve -m " + kModel + " --chat-template nope"),
                     "unknown chat template 'nope'");
  ExpectOneErrorLine(RunH2o("serve -m /nonexistent/model.gguf"), "/nonexistent/model.gguf");
  // The limits and keys (RELIABILITY.md, "Hostile clients").
  const std::pair<std::string, std::string> bad[] = {
      {"--max-header-size lots", "--max-header-size"},
      {"--max-header-size 100", "--max-header-size must be at least 1KiB"},
      {"--max-connections 0", "--max-connections"},
      {"--header-timeout -1", "--header-timeout"},
      {"--api-key a,,b", "--api-key: an empty key"},
      {"--api-key-file /nonexistent/keys", "/nonexistent/keys"},
      {"--api-key-file /dev/null", "--api-key-file /dev/null: no key in it"},
  };
  for (const auto& [flags, says] : bad) {
    ExpectOneErrorLine(RunH2o("serve -m " + kModel + " " + flags), says);
  }
}

// A port another process listens on: the reason, not just "cannot listen".
TEST(CliErrors, ServeOnABusyPortSaysWhy) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  const auto r = RunH2o("serve -m " + kModel + " --port " + std::to_string(port));
  close(fd);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneErrorLine(r, "cannot listen on 127.0.0.1:" + std::to_string(port) +
                            ": Address already in use");
}
TEST(CliErrors, UnknownFlag) {
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " -p hi --bogus"), "--bogus");
}
TEST(CliErrors, MissingModelFlag) { ExpectOneErrorLine(RunH2o("generate -p hi"), "--model"); }
TEST(CliErrors, MissingPrompt) { ExpectOneErrorLine(RunH2o("generate -m " + kModel), "prompt"); }
TEST(CliErrors, BadNumber) {
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " -p hi -n many"), "many");
}
TEST(CliErrors, MissingModelFile) {
  ExpectOneErrorLine(RunH2o("generate -m /nonexistent/model.gguf -p hi"),
                     "/nonexistent/model.gguf");
}
TEST(CliErrors, BadTokenIds) {
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " --tokens '1 x 3'"),
                     "'x' is not a token id");
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " --tokens '1 9999'"), "out of range");
}
// -n as llama.cpp reads it: past the context generation stops there (with
// a warning), -1 runs to the context's end; a prompt that fills the
// context is an error. "hi" is 3 tokens with BOS: 13 fit in -c 16.
TEST(CliErrors, PromptPastContext) {
  const std::string base = "generate -m " + kModel + " -p hi --temp 0 --ignore-eos -c 16 ";
  const testing::RunResult past = RunH2o(base + "-n 100");
  ASSERT_EQ(past.exit_code, 0) << past.err;
  EXPECT_NE(past.err.find("h2o: warning: -n 100: the context size 16 holds 13 tokens after the "
                          "3-token prompt; generation stops there\n"),
            std::string::npos)
      << past.err;
  EXPECT_NE(past.err.find("generated: 13 tokens"), std::string::npos) << past.err;
  const testing::RunResult all = RunH2o(base + "-n -1");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.err.find("warning"), std::string::npos) << all.err;
  EXPECT_NE(all.err.find("generated: 13 tokens"), std::string::npos) << all.err;
  EXPECT_EQ(all.out, past.out);
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " --tokens '1 2 3 4' -c 4 -n 1"),
                     "the prompt (4 tokens) fills the context size 4");
}
TEST(CliErrors, BadKvType) {
  ExpectOneErrorLine(RunH2o("generate -m " + kModel + " -p hi --kv-type q3"), "--kv-type");
}

TEST_F(TempDir, CorruptModelFiles) {
  const std::string model_bytes = testing::ReadFileOrEmpty(kModel);
  {
    std::ofstream(Path("truncated.gguf"), std::ios::binary) << model_bytes.substr(0, 200000);
    ExpectOneErrorLine(RunH2o("generate -m " + Path("truncated.gguf") + " -p hi"),
                       Path("truncated.gguf"));
  }
  {
    std::string bad = model_bytes;
    bad[0] = 'X';
    std::ofstream(Path("magic.gguf"), std::ios::binary) << bad;
    ExpectOneErrorLine(RunH2o("generate -m " + Path("magic.gguf") + " -p hi"), "magic");
  }
  {
    std::ofstream(Path("empty.gguf"), std::ios::binary) << "";
    ExpectOneErrorLine(RunH2o("perplexity -m " + Path("empty.gguf") + " --token-file " +
                              testing::DataPath("stories260K/streams/s001.txt")),
                       Path("empty.gguf"));
  }
  ExpectOneErrorLine(RunH2o("inspect " + Path("missing.gguf")), "missing.gguf");
}

TEST_F(TempDir, PerplexityInputErrors) {
  std::ofstream(Path("ids.txt")) << "1 2 banana 4\n";
  ExpectOneErrorLine(RunH2o("perplexity -m " + kModel + " --token-file " + Path("ids.txt")),
                     "ids.txt:1: 'banana' is not a token id");
  std::ofstream(Path("short.txt")) << "1\n";
  ExpectOneErrorLine(RunH2o("perplexity -m " + kModel + " --token-file " + Path("short.txt")),
                     "at least 2 tokens");
  ExpectOneErrorLine(RunH2o("perplexity -m " + kModel + " -f " + Path("nope.txt")), "nope.txt");
}

TEST_F(TempDir, ConvertErrorsLeaveNoOutput) {
  std::ofstream(Path("bad.bin"), std::ios::binary) << "not a checkpoint at all, sorry";
  ExpectOneErrorLine(RunH2o("convert llama2c " + Path("bad.bin") + " -o " + Path("out.gguf")),
                     Path("bad.bin"));
  EXPECT_FALSE(std::filesystem::exists(Path("out.gguf")));
  ExpectOneErrorLine(RunH2o("convert safetensors x -o y"), "safetensors");
}

}  // namespace
}  // namespace h2o
