// The regexes are llama.cpp's, including its adaptations of the Hugging Face
// originals: (?i:'s|...) spelled '[sS]|... (so U+017F, long s, is no 's'),
// and Tekken's Lu/Ll classes spelled as "a letter that is not a-z / A-Z".
// Non-ASCII code points are written \x{...}: several of llama.cpp's have
// canonical equivalents (U+1F7D and U+03CE), which an editor normalizing
// the source to NFC would silently swap.
//
// Where llama.cpp matches a pattern with literal non-ASCII ranges (std::wregex
// on text in which every non-ASCII whitespace character was replaced by
// U+000B), those ranges never match whitespace; (?!\s) says the same here.
#include "tokenizer/pre_tokenizer_specs.h"

#include <array>

namespace h2o {
namespace {

constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
#define H2O_CONTRACTIONS R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))"
constexpr std::string_view kLlama3 = H2O_CONTRACTIONS
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 = H2O_CONTRACTIONS
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kSeedCoder = H2O_CONTRACTIONS
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)";
#define H2O_UPPER_THEN_LOWER R"([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])*(?:(?=\p{L})[^A-Z])+)"
#define H2O_LOWER_AFTER_UPPER R"([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])+(?:(?=\p{L})[^A-Z])*)"
constexpr std::string_view kTekken = H2O_UPPER_THEN_LOWER
    "|" H2O_LOWER_AFTER_UPPER R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt4o = H2O_UPPER_THEN_LOWER H2O_CONTRACTIONS
    "?|" H2O_LOWER_AFTER_UPPER H2O_CONTRACTIONS
    R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
#undef H2O_CONTRACTIONS
#undef H2O_UPPER_THEN_LOWER
#undef H2O_LOWER_AFTER_UPPER
constexpr std::string_view kBailingMoe =
    R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";
constexpr std::string_view kCjkRanges =
    R"((?:(?!\s)[\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}])+)";
constexpr std::string_view kBloom =
    R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{0964}\x{06D4}\x{060C})]+)";

constexpr std::string_view kDefaultNames[] = {"default"};
constexpr std::string_view kDefaultPatterns[] = {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)",
                                                 "[0-9][0-9][0-9]"};

constexpr std::string_view kLlama3Names[] = {"llama3",    "llama-v3", "llama-bpe", "falcon3",
                                             "falcon-h1", "pixtral",  "midm-2.0",  "lfm2"};
constexpr std::string_view kDbrxNames[] = {"dbrx", "smaug-bpe"};
constexpr std::string_view kLlama3Patterns[] = {kLlama3};

constexpr std::string_view kDeepseekLlmNames[] = {"deepseek-llm"};
constexpr std::string_view kDeepseekLlmPatterns[] = {
    R"([\r\n])",
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF})"
    R"(\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F})"
    R"(\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481})"
    R"(\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD})"
    R"(\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77})"
    R"(\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45})"
    R"(\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})"
    R"(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC})"
    R"(\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06})"
    R"(\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F})"
    R"(\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2})"
    R"(\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)",
    R"(\s?(?:(?!\s)[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}])+)",
    R"(\s+$)",
    kCjkRanges,
    R"(\p{N}+)"};

constexpr std::string_view kDeepseekCoderNames[] = {"deepseek-coder"};
constexpr std::string_view kDeepseekCoderPatterns[] = {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)",
                                                       kCjkRanges, R"(\p{N})"};

constexpr std::string_view kFalconNames[] = {"falcon"};
constexpr std::string_view kFalconPatterns[] = {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2,
                                                "[0-9][0-9][0-9]"};

constexpr std::string_view kStarcoderNames[] = {"starcoder", "refact", "command-r", "smollm",
                                                "codeshell", "exaone", "minerva-7b"};
constexpr std::string_view kStarcoderPatterns[] = {R"(\p{N})", kGpt2};

constexpr std::string_view kGpt2Names[] = {
    "gpt-2",           "phi-2",   "mpt",     "olmo",   "jais",    "trillion",
    "granite-docling", "exaone4", "a.x-4.0", "mellum", "gigachat"};
constexpr std::string_view kGpt2Patterns[] = {kGpt2};

constexpr std::string_view kQwen2Names[] = {"qwen2",  "deepseek-r1-qwen", "kormo",      "stablelm2",
                                            "megrez", "hunyuan",          "solar-open", "grok-2"};
constexpr std::string_view kQwen2Patterns[] = {kQwen2};

constexpr std::string_view kTekkenNames[] = {"tekken"};
constexpr std::string_view kTekkenPatterns[] = {kTekken};

constexpr std::string_view kGpt4oNames[] = {"gpt-4o", "llama4", "minimax-m2"};
constexpr std::string_view kGpt4oPatterns[] = {kGpt4o};

constexpr std::string_view kSeedCoderNames[] = {"seed-coder"};
constexpr std::string_view kSeedCoderPatterns[] = {kSeedCoder};

constexpr std::string_view kBailingMoeNames[] = {"bailingmoe", "bailingmoe2", "llada-moe"};
constexpr std::string_view kBailingMoePatterns[] = {kBailingMoe};

constexpr std::string_view kBloomNames[] = {"bloom", "poro-chat", "gpt3-finnish"};
constexpr std::string_view kBloomPatterns[] = {kBloom};

constexpr std::string_view kVikingNames[] = {"viking"};
constexpr std::string_view kVikingPatterns[] = {kBloom, R"(\p{N})"};

const std::array kSpecs = {
    PreTokenizerSpec{kDefaultNames, kDefaultPatterns},
    PreTokenizerSpec{kLlama3Names, kLlama3Patterns, /*ignore_merges=*/true, /*add_bos=*/true},
    PreTokenizerSpec{kDbrxNames, kLlama3Patterns},
    PreTokenizerSpec{kDeepseekLlmNames, kDeepseekLlmPatterns},
    PreTokenizerSpec{kDeepseekCoderNames, kDeepseekCoderPatterns},
    PreTokenizerSpec{kFalconNames, kFalconPatterns},
    PreTokenizerSpec{kStarcoderNames, kStarcoderPatterns},
    PreTokenizerSpec{kGpt2Names, kGpt2Patterns},
    PreTokenizerSpec{kQwen2Names, kQwen2Patterns},
    PreTokenizerSpec{kTekkenNames, kTekkenPatterns, /*ignore_merges=*/true, /*add_bos=*/true},
    PreTokenizerSpec{kGpt4oNames, kGpt4oPatterns},
    PreTokenizerSpec{kSeedCoderNames, kSeedCoderPatterns},
    PreTokenizerSpec{kBailingMoeNames, kBailingMoePatterns},
    PreTokenizerSpec{kBloomNames, kBloomPatterns},
    PreTokenizerSpec{kVikingNames, kVikingPatterns},
};

}  // namespace

const PreTokenizerSpec* FindPreTokenizer(std::string_view name) {
  if (name.empty()) name = "default";
  for (const PreTokenizerSpec& spec : kSpecs) {
    for (std::string_view spec_name : spec.names) {
      if (spec_name == name) return &spec;
    }
  }
  return nullptr;
}

std::span<const PreTokenizerSpec> PreTokenizerSpecs() { return kSpecs; }

}  // namespace h2o
