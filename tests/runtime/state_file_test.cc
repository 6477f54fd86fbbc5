// State files on their own: a state written and read back is the same
// state; a truncated, corrupt, foreign or newer file is refused with one
// line naming it (never a crash), a file whose checksum holds but whose
// fields do not add up is refused by CanLoadState, and save names are
// never paths.
#include "runtime/state_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kv/kv_spec.h"
#include "q8_model.h"
#include "runtime/engine.h"
#include "runtime/state_dir.h"

namespace h2o {
namespace {

struct Made {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Sequence> sequence;
  std::vector<int32_t> tokens;
};

Made Fed(const std::string& kv) {
  Made m;
  m.engine = Engine::Create(testing::Q8Model(), {.n_threads = 1, .max_batch_tokens = 64}).value();
  SequenceOptions o;
  o.n_ctx = 96;
  o.max_chunk = 16;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), std::nullopt).value();
  m.sequence = m.engine->NewSequence(o).value();
  for (int i = 0; i < 40; ++i) m.tokens.push_back(3 + (i * 53) % 400);
  for (size_t at = 0; at < m.tokens.size(); at += 16) {
    const size_t n = std::min<size_t>(16, m.tokens.size() - at);
    BatchItem item;
    item.sequence = m.sequence.get();
    item.tokens = std::span<const int32_t>(m.tokens).subspan(at, n);
    item.want_logits = at + n == m.tokens.size();
    EXPECT_TRUE(m.engine->Forward({&item, 1}).ok());
  }
  return m;
}

std::string Path(const std::string& name) {
  return ::testing::TempDir() + "h2o_state_" + name + "_" + std::to_string(::getpid());
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(StateFile, WhatIsWrittenReadsBackTheSame) {
  for (const char* kv : {"full", "h2o:heavy=8,recent=8", "random:k=12,seed=3"}) {
    SCOPED_TRACE(kv);
    Made m = Fed(kv);
    SequenceState state;
    m.sequence->SaveState(state);
    const std::string path = Path("same");
    const uint64_t fingerprint = ModelFingerprint(testing::Q8Model());
    ASSERT_TRUE(WriteStateFile(path, fingerprint, m.tokens, state).ok());
    auto key = ReadStateFileKey(path, fingerprint);
    ASSERT_TRUE(key.ok()) << key.status().message();
    EXPECT_EQ(key->tokens, m.tokens);
    EXPECT_EQ(key->kv_plan, state.kv_plan);
    EXPECT_TRUE(key->has_logits);
    auto read = ReadStateFile(path, fingerprint);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(read->tokens, m.tokens);
    const KvCacheState& a = state.cache;
    const KvCacheState& b = read->state.cache;
    EXPECT_EQ(a.k, b.k);
    EXPECT_EQ(a.v, b.v);
    EXPECT_EQ(a.pos, b.pos);
    EXPECT_EQ(a.scores, b.scores);
    EXPECT_EQ(a.used, b.used);
    EXPECT_EQ(a.layer_budget, b.layer_budget);
    EXPECT_EQ(a.policy->SaveStateBytes(), b.policy->SaveStateBytes());
    EXPECT_EQ(read->state.last_logits, state.last_logits);
    EXPECT_EQ(read->state.n_past, 40);
    EXPECT_TRUE(m.sequence->CanLoadState(read->state));
    std::remove(path.c_str());
  }
}

TEST(StateFile, BrokenOrForeignFilesAreRefusedWithOneLine) {
  Made m = Fed("h2o:heavy=8,recent=8");
  SequenceState state;
  m.sequence->SaveState(state);
  const std::string path = Path("broken");
  const uint64_t fingerprint = ModelFingerprint(testing::Q8Model());
  ASSERT_TRUE(WriteStateFile(path, fingerprint, m.tokens, state).ok());
  const std::string good = Bytes(path);
  const auto refused = [&](const std::string& bytes, const char* why) {
    Write(path, bytes);
    auto read = ReadStateFile(path, fingerprint);
    ASSERT_FALSE(read.ok()) << why;
    const std::string message = read.status().message();
    EXPECT_EQ(message.rfind(path, 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
  };
  // Cut anywhere: inside the head, the key, the rows, the checksum.
  for (const size_t n : {size_t{0}, size_t{5}, size_t{8}, size_t{13}, size_t{30}, size_t{200},
                         good.size() / 2, good.size() - 1}) {
    SCOPED_TRACE(n);
    Write(path, good.substr(0, n));
    EXPECT_FALSE(ReadStateFile(path, fingerprint).ok());
    if (n < 200) {
      EXPECT_FALSE(ReadStateFileKey(path, fingerprint).ok());
    }
  }
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  refused(flipped, "checksum");
  refused("GGUF" + good.substr(4), "does not begin with H2OSTATE");
  std::string newer = good;
  newer[8] = 2;
  refused(newer, "format version 2");
  Write(path, good);
  auto foreign = ReadStateFile(path, fingerprint ^ 1);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("another model"), std::string::npos);
  EXPECT_FALSE(ReadStateFileKey(path, fingerprint ^ 1).ok());
  EXPECT_FALSE(ReadStateFile(Path("absent"), fingerprint).ok());

  // A checksum that holds over fields that do not: refused before a row
  // is copied (a head said to hold one slot more than the rows give,
  // still within its budget).
  Made full = Fed("full");
  SequenceState lying;
  full.sequence->SaveState(lying);
  ASSERT_TRUE(full.sequence->CanLoadState(lying));
  lying.cache.used[3] += 1;
  ASSERT_TRUE(WriteStateFile(path, fingerprint, full.tokens, lying).ok());
  auto read = ReadStateFile(path, fingerprint);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(full.sequence->CanLoadState(read->state));
  std::remove(path.c_str());
}

TEST(StateFile, ASaveNameIsNeverAPath) {
  for (const char* bad : {"", ".hidden", "../x", "a/b", "/etc/passwd", "a b", "..", "x\\y"}) {
    EXPECT_FALSE(StateDir::CheckName(bad).ok()) << bad;
  }
  EXPECT_FALSE(StateDir::CheckName(std::string(129, 'a')).ok());
  const std::vector<std::string> good = {"chat-1", "alice.state", "A_b.9", std::string(128, 'z')};
  for (const std::string& name : good) EXPECT_TRUE(StateDir::CheckName(name).ok()) << name;
}

}  // namespace
}  // namespace h2o
