#include "cli/command.h"

#include <cstdio>

#include "cli/client_config.h"
#include "cli/kafka_errors.h"

namespace runnel::cli {

ParsedArgs parse_command(std::vector<OptionSpec> specs, const std::vector<std::string>& args, const char* usage,
                         const char* about) {
  specs.push_back(kBrokersOption);
  specs.push_back(kConfigOption);
  specs.push_back(kHelpOption);
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") {
      std::printf("usage: %s\n%s\n\noptions:\n%s", usage, about, options_help(specs).c_str());
      throw HelpShown{};
    }
  }
  return parse_args(specs, args);
}

std::string one_positional(const ParsedArgs& args, const char* what, const char* usage) {
  if (args.positionals().size() != 1)
    throw UsageError(std::string(args.positionals().empty() ? "missing " : "one ") + what + " expected; usage: " + usage);
  return args.positionals().front();
}

int dispatch_verb(const char* group, std::span<const Verb> verbs, const std::vector<std::string>& args) {
  std::string usage = std::string("usage: runnel ") + group + " ";
  for (size_t i = 0; i < verbs.size(); ++i) usage += std::string(i ? "|" : "") + verbs[i].name;
  usage += " ... (--help on each)\n";
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(usage.c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto& v : verbs)
    if (args[0] == v.name) return v.run(rest);
  throw UsageError("unknown " + std::string(group) + " command '" + args[0] + "'; " + usage);
}

}  // namespace runnel::cli
