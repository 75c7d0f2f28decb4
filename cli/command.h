// What each `runnel <group> <verb>` shares: parse its options (with the
// common ones), print --help, and hand the remaining words over.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cli/args.h"

namespace runnel::cli {

// Thrown after --help was printed: the command ends with exit code 0.
struct HelpShown {};

// Parses `args` against `specs` (the common -b, -X, -h are added). On -h or
// --help prints "usage: <usage>\n<about>\n\noptions:..." and throws HelpShown.
ParsedArgs parse_command(std::vector<OptionSpec> specs, const std::vector<std::string>& args, const char* usage,
                         const char* about);

// The single positional argument `what` (UsageError if missing or extra).
std::string one_positional(const ParsedArgs& args, const char* what, const char* usage);

// A verb of a command group (`topic create`, `group describe`, ...).
struct Verb {
  const char* name;
  int (*run)(const std::vector<std::string>& args);
};

// Runs the verb args[0] names with the words after it; with no verb or
// --help, lists the verbs (exit 2 or 0).
int dispatch_verb(const char* group, std::span<const Verb> verbs, const std::vector<std::string>& args);

// Entry points, one per command group; `args` are the words after it.
int topic_command(const std::vector<std::string>& args);
int produce_command(const std::vector<std::string>& args);
int consume_command(const std::vector<std::string>& args);
int group_command(const std::vector<std::string>& args);
int cluster_command(const std::vector<std::string>& args);
int acl_command(const std::vector<std::string>& args);
int user_command(const std::vector<std::string>& args);

}  // namespace runnel::cli
