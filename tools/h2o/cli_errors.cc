#include "cli_errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <vector>

#include "kv/kv_budget.h"
#include "kv/kv_spec.h"

namespace h2o::cli {
namespace {

std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return std::nullopt;
  return value;
}

std::string FormatBound(double value) { return fmt::format("{:g}", value); }

// What a CLI11 type name ("INT:NONNEGATIVE", "FLOAT:FLOAT in [0 - 1]")
// takes, in words: "an integer, 0 or more", "a number, 0 to 1".
struct TypeWords {
  std::string label;  // for help: "INT (0 or more)"
  std::string noun;   // for errors: "an integer"
  std::string range;  // "0 or more", or empty
};

TypeWords DescribeType(const std::string& type_name) {
  TypeWords w;
  const size_t colon = type_name.find(':');
  const std::string base = type_name.substr(0, colon);
  const std::string check = colon == std::string::npos ? "" : type_name.substr(colon + 1);
  if (base == "INT" || base == "UINT") {
    w.label = "INT";
    w.noun = base == "UINT" ? "a whole number, 0 or more" : "a whole number";
  } else if (base == "FLOAT") {
    w.label = "NUMBER";
    w.noun = "a number";
  } else {
    w.label = base;
    w.noun = "a value";
  }
  static const std::regex kRange(R"(\S+ in \[(\S+) - (\S+)\])");
  std::smatch m;
  if (check == "NONNEGATIVE") {
    w.range = "0 or more";
  } else if (check == "POSITIVE") {
    w.range = "more than 0";
  } else if (std::regex_match(check, m, kRange)) {
    w.range = m[1].str() + " to " + m[2].str();
  } else if (check.size() >= 2 && check.front() == '{' && check.back() == '}') {
    w.range = "one of: " + check.substr(1, check.size() - 2);  // CLI::IsMember
  } else if (!check.empty()) {
    w.range = check;
  }
  if (!w.range.empty()) w.label += " (" + w.range + ")";
  return w;
}

// Finds an option by a name as CLI11 prints it ("--n-predict", "-n").
const CLI::Option* FindOption(CLI::App& command, const std::string& name) {
  try {
    return command.get_option_no_throw(name);
  } catch (const CLI::Error&) {
    return nullptr;
  }
}

std::string Flag(CLI::App& command, const std::string& name) {
  const CLI::Option* opt = FindOption(command, name);
  return opt != nullptr ? FlagNames(*opt) : name;
}

// "Value -5 not in range 0.000000 to 1.79769e+308" (CLI11's Range,
// NonNegativeNumber, PositiveNumber); `range` is the option's own words for
// it ("0 or more") when it has them.
std::optional<std::string> DescribeRangeError(const std::string& value, const std::string& lo,
                                              const std::string& hi, std::string range) {
  if (!ParseNumber(value)) return fmt::format("'{}' is not a number", value);
  if (range.empty()) {
    const std::optional<double> a = ParseNumber(lo);
    const std::optional<double> b = ParseNumber(hi);
    if (!a || !b) return std::nullopt;
    range = *b >= 1e300 ? FormatBound(*a) + " or more" : FormatBound(*a) + " to " + FormatBound(*b);
  }
  return fmt::format("{} is not allowed ({})", value, range);
}

std::string DescribeValidation(CLI::App& command, const std::string& message) {
  // "NAME: detail"
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) return message;
  const std::string name = message.substr(0, colon);
  const std::string detail = message.substr(colon + 2);
  const CLI::Option* opt = FindOption(command, name);
  const std::string flag = opt != nullptr ? FlagNames(*opt) : name;
  static const std::regex kRange(R"(Value (.*) not in range (\S+) to (\S+))");
  std::smatch m;
  if (std::regex_match(detail, m, kRange)) {
    const std::string range = opt != nullptr ? DescribeType(opt->get_type_name()).range : "";
    if (auto text = DescribeRangeError(m[1].str(), m[2].str(), m[3].str(), range)) {
      return flag + ": " + *text;
    }
  }
  static const std::regex kMember(R"((.*) not in \{(.*)\})");  // CLI::IsMember
  if (std::regex_match(detail, m, kMember)) {
    return fmt::format("{}: '{}' is not allowed (one of: {})", flag, m[1].str(), m[2].str());
  }
  return flag + ": " + detail;
}

std::string DescribeConversion(CLI::App& command, const std::string& message) {
  static const std::regex kConvert(R"(Could not convert: (\S+) = (.*))");
  static const std::regex kNotAllowed(R"(The value (.*) is not an allowed value for (\S+))");
  std::smatch m;
  if (std::regex_match(message, m, kConvert)) {
    const CLI::Option* opt = FindOption(command, m[1].str());
    if (opt == nullptr) return message;
    return fmt::format("{}: '{}' is not {}", FlagNames(*opt), m[2].str(),
                       DescribeType(opt->get_type_name()).noun);
  }
  if (std::regex_match(message, m, kNotAllowed)) {
    return fmt::format("{}: '{}' is not allowed", Flag(command, m[2].str()), m[1].str());
  }
  return message;
}

std::string DescribeMismatch(CLI::App& command, const std::string& message) {
  static const std::regex kMissing(R"((\S+): \d+ required (.+) missing)");
  std::smatch m;
  if (std::regex_match(message, m, kMissing)) {
    const CLI::Option* opt = FindOption(command, m[1].str());
    if (opt == nullptr) return message;
    const TypeWords type = DescribeType(opt->get_type_name());
    return fmt::format("{}: missing its value ({}{})", FlagNames(*opt), type.noun,
                       type.range.empty() ? "" : ", " + type.range);
  }
  return message;
}

std::string DescribeExtras(CLI::App& app) {
  const std::vector<std::string> extras = app.remaining(true);
  if (extras.empty()) return "unexpected arguments";
  std::string all;
  for (const std::string& e : extras) all += (all.empty() ? "" : " ") + e;
  const std::string& first = extras.front();
  std::string text = first.size() > 1 && first[0] == '-' && !ParseNumber(first)
                         ? fmt::format("unknown option '{}'", first)
                         : fmt::format("unexpected argument '{}'", first);
  if (extras.size() > 1) text += fmt::format(" (not understood: {})", all);
  return text;
}

}  // namespace

std::string FlagNames(const CLI::Option& option) {
  std::string names;
  for (const std::string& s : option.get_snames()) names += (names.empty() ? "-" : "/-") + s;
  for (const std::string& l : option.get_lnames()) names += (names.empty() ? "--" : "/--") + l;
  return names.empty() ? option.get_name() : names;
}

std::string DescribeParseError(const CLI::ParseError& error, CLI::App& app, CLI::App& command) {
  const std::string message = error.what();
  std::smatch m;
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    return DescribeValidation(command, message);
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    return DescribeConversion(command, message);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    return DescribeMismatch(command, message);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) return DescribeExtras(app);
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    static const std::regex kExcludes(R"((\S+) excludes (\S+))");
    if (std::regex_match(message, m, kExcludes)) {
      return fmt::format("{} and {} cannot be used together", Flag(command, m[1].str()),
                         Flag(command, m[2].str()));
    }
  }
  if (dynamic_cast<const CLI::RequiresError*>(&error) != nullptr) {
    static const std::regex kRequires(R"((\S+) requires (\S+))");
    if (std::regex_match(message, m, kRequires)) {
      return fmt::format("{} needs {} too", Flag(command, m[1].str()), Flag(command, m[2].str()));
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    static const std::regex kRequired(R"((-\S+) is required)");
    if (std::regex_match(message, m, kRequired)) {
      return Flag(command, m[1].str()) + " is required";
    }
    if (message == "A subcommand is required") return "a command is required";
  }
  return message;
}

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    if (is_positional) return opt->get_name(true, false);
    std::string names;
    for (const std::string& s : opt->get_snames()) names += (names.empty() ? "-" : ", -") + s;
    for (const std::string& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
    return names;
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out;
    if (opt->get_type_size() != 0) {
      if (!opt->get_type_name().empty()) out += " " + DescribeType(opt->get_type_name()).label;
      if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
      if (opt->get_required()) out += " REQUIRED";
    }
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    std::string def = opt->get_type_size() != 0 ? opt->get_default_str() : "";
    if (def.size() >= 2 && def.front() == '[' && def.back() == ']') {
      def = def.substr(1, def.size() - 2);
    }
    if (!def.empty()) desc += " (default: " + def + ")";
    if (!opt->get_excludes().empty()) {
      std::string others;
      for (const CLI::Option* other : opt->get_excludes()) {
        others += (others.empty() ? "" : ", ") + FlagNames(*other);
      }
      desc += "; not with " + others;
    }
    return desc;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> MakeHelpFormatter() {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(32);
  return formatter;
}

void RequireOneOf(CLI::App& cmd, const std::vector<std::string>& options, const std::string& what) {
  CLI::App* app = &cmd;
  cmd.callback([app, options, what] {
    std::vector<std::string> given;
    for (const std::string& option : options) {
      if (app->count(option) > 0) given.push_back(option);
    }
    if (given.empty()) throw CLI::RequiredError(what);
    if (given.size() > 1) throw CLI::ExcludesError(given[0], given[1]);
  });
}

CLI::Validator OnePolicy(const std::string& command) {
  return CLI::Validator(
      [command](std::string& text) -> std::string {
        const Result<KvSpec> spec = ParseKvSpec(text);
        if (spec.ok()) return "";
        // A list says so, rather than failing on its second policy's name.
        if (text.find(',') != std::string::npos) {
          auto list = SplitKvSpecList(text);
          if (list.ok() && list->size() >= 2) {
            return fmt::format(
                "'{}' is a list of {} policies; {} takes one (a list is for perplexity, eval and "
                "bench)",
                text, list->size(), command);
          }
        }
        return spec.status().message();
      },
      "");
}

void CheckKvSweepWhenParsed(CLI::App& cmd, const std::string* kv_list,
                            const std::string* budget_list) {
  cmd.parse_complete_callback([kv_list, budget_list] {
    const Result<std::vector<KvSweepEntry>> entries = ExpandKvSweep(*kv_list, *budget_list);
    if (entries.ok()) return;
    const std::string message = entries.status().message();
    const bool budgets_at_fault =
        !budget_list->empty() && message.find("budget") != std::string::npos;
    throw CLI::ValidationError(budgets_at_fault ? "--budget" : "--kv", message);
  });
}

}  // namespace h2o::cli
