// `runnel acl create|list|delete`: ACL bindings through CreateAcls,
// DescribeAcls and DeleteAcls (APIs 30, 29, 31), what kafka-acls.sh --add,
// --list and --remove send. Names are Kafka's (security/authorizer/acl.h),
// read in any case and with - or _ ("describe-configs", "DescribeConfigs").
#include <cctype>
#include <cstdio>

#include "cli/cluster.h"
#include "cli/command.h"
#include "cli/kafka_errors.h"
#include "cli/table.h"
#include "protocol/messages/29_describe_acls.h"
#include "protocol/messages/30_create_acls.h"
#include "protocol/messages/31_delete_acls.h"
#include "security/authorizer/acl.h"

namespace runnel::cli {

namespace json = boost::json;
using namespace protocol;
using security::AclOperation;
using security::AclPermissionType;
using security::PatternType;
using security::ResourceType;

namespace {

constexpr OptionSpec kPrincipal{0, "principal", "TYPE:NAME", "the principal, e.g. User:alice (default: any, for list and delete)"};
constexpr OptionSpec kHost{0, "host", "HOST", "the client host (default *: any host)"};
constexpr OptionSpec kOperation{0, "operation", "OP", "READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, ALL, ... (repeatable)"};
constexpr OptionSpec kDeny{0, "deny", nullptr, "a DENY binding (create; default ALLOW)"};
constexpr OptionSpec kPermission{0, "permission", "allow|deny", "only bindings with this permission (list, delete)"};
constexpr OptionSpec kTopic{0, "topic", "NAME", "a topic resource (* for every topic)"};
constexpr OptionSpec kGroup{0, "group", "NAME", "a consumer group resource"};
constexpr OptionSpec kTransactionalId{0, "transactional-id", "ID", "a transactional id resource"};
constexpr OptionSpec kCluster{0, "cluster", nullptr, "the cluster resource"};
constexpr OptionSpec kUser{0, "user-resource", "NAME", "a USER resource (delegation tokens)"};
constexpr OptionSpec kPattern{0, "pattern", "TYPE",
                              "literal or prefixed (create, default literal); list and delete also take any (default) "
                              "and match"};
constexpr OptionSpec kOutputOption{'o', "output", "text|json", "output format (default text)"};

// What list and delete filter on.
const std::vector<OptionSpec> kFilterOptions{kPrincipal, kHost,    kOperation, kPermission, kTopic, kGroup,
                                             kTransactionalId, kCluster, kUser, kPattern, kOutputOption};

// "describe-configs", "DescribeConfigs", "describe_configs" -> "DESCRIBE_CONFIGS".
std::string enum_word(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-') c = '_';
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(text[i - 1])))
      out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

template <typename T>
T parsed(std::optional<T> (*parse)(const std::string&), const std::string& text, const char* what) {
  auto v = parse(enum_word(text));
  if (!v) throw UsageError(std::string("unknown ") + what + " '" + text + "'");
  return *v;
}

struct Resource {
  ResourceType type = ResourceType::any;
  std::optional<std::string> name;
};

// The one resource option given; `required` for create.
Resource resource_of(const ParsedArgs& args, bool required) {
  std::vector<Resource> given;
  if (args.has("topic")) given.push_back({ResourceType::topic, args.get("topic")});
  if (args.has("group")) given.push_back({ResourceType::group, args.get("group")});
  if (args.has("transactional-id")) given.push_back({ResourceType::transactional_id, args.get("transactional-id")});
  if (args.has("user-resource")) given.push_back({ResourceType::user, args.get("user-resource")});
  if (args.has("cluster")) given.push_back({ResourceType::cluster, std::string(security::kClusterName)});
  if (given.size() > 1) throw UsageError("one of --topic, --group, --transactional-id, --user-resource, --cluster");
  if (given.empty() && required)
    throw UsageError("a resource is needed: --topic, --group, --transactional-id, --user-resource or --cluster");
  return given.empty() ? Resource{} : given.front();
}

std::vector<AclOperation> operations_of(const ParsedArgs& args, AclOperation fallback) {
  std::vector<AclOperation> out;
  for (const auto& o : args.all("operation")) out.push_back(parsed(security::parse_acl_operation, o, "operation"));
  if (out.empty()) out.push_back(fallback);
  return out;
}

const char* name_of(int8_t code, const char* (*namer)(ResourceType)) { return namer(security::resource_type(code)); }

std::vector<std::string> row(int8_t type, const std::string& name, int8_t pattern, const std::string& principal,
                             const std::string& host, int8_t op, int8_t permission) {
  return {name_of(type, security::name), name, security::name(security::pattern_type(pattern)), principal, host,
          security::name(security::acl_operation(op)), security::name(security::acl_permission_type(permission))};
}

json::object row_json(const std::vector<std::string>& r) {
  return json::object{{"resource_type", r[0]}, {"resource_name", r[1]}, {"pattern_type", r[2]},
                      {"principal", r[3]},     {"host", r[4]},          {"operation", r[5]},
                      {"permission", r[6]}};
}

const std::vector<std::string> kHeaders{"RESOURCE-TYPE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION",
                                        "PERMISSION"};

void print_rows(const std::vector<std::vector<std::string>>& rows, bool as_json) {
  if (as_json) {
    json::array out;
    for (const auto& r : rows) out.push_back(row_json(r));
    print_json(out);
    return;
  }
  Table table(kHeaders);
  for (const auto& r : rows) table.add(r);
  std::fputs(table.render().c_str(), stdout);
}

// The filter fields list and delete share.
struct Filter {
  int8_t resource_type;
  std::optional<std::string> resource_name;
  int8_t pattern_type;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  int8_t permission;
};

Filter filter_of(const ParsedArgs& args) {
  Resource r = resource_of(args, false);
  Filter f{static_cast<int8_t>(r.type), r.name,
           static_cast<int8_t>(parsed(security::parse_pattern_type, args.get("pattern", "any"), "pattern type")),
           std::nullopt, std::nullopt, static_cast<int8_t>(AclPermissionType::any)};
  if (args.has("principal")) f.principal = args.get("principal");
  if (args.has("host")) f.host = args.get("host");
  if (args.has("permission"))
    f.permission = static_cast<int8_t>(parsed(security::parse_acl_permission_type, args.get("permission"), "permission"));
  return f;
}

// DescribeAclsRequest and DeleteAclsFilter name their filter fields alike.
template <typename Wire>
void fill(Wire& w, const Filter& f, AclOperation op) {
  w.resource_type_filter = f.resource_type;
  w.resource_name_filter = f.resource_name;
  w.pattern_type_filter = f.pattern_type;
  w.principal_filter = f.principal;
  w.host_filter = f.host;
  w.operation = static_cast<int8_t>(op);
  w.permission_type = f.permission;
}

int create(const std::vector<std::string>& argv) {
  const char* usage = "runnel acl create --principal User:NAME --operation OP [--operation OP ...] [--host HOST] "
                      "[--deny] (--topic T|--group G|--transactional-id ID|--user-resource U|--cluster) "
                      "[--pattern literal|prefixed]";
  auto args = parse_command({kPrincipal, kHost, kOperation, kDeny, kTopic, kGroup, kTransactionalId, kCluster, kUser,
                             kPattern},
                            argv, usage, "Adds ACL bindings: one per operation given (kafka-acls.sh --add).");
  if (!args.has("principal")) throw UsageError(std::string("--principal is needed; usage: ") + usage);
  if (!args.has("operation")) throw UsageError(std::string("--operation is needed; usage: ") + usage);
  Resource r = resource_of(args, true);
  auto pattern = parsed(security::parse_pattern_type, args.get("pattern", "literal"), "pattern type");
  if (pattern != PatternType::literal && pattern != PatternType::prefixed)
    throw UsageError("a binding's pattern is literal or prefixed");
  CreateAclsRequest req;
  for (AclOperation op : operations_of(args, AclOperation::unknown)) {
    CreateAclsRequest::AclCreation c;
    c.resource_type = static_cast<int8_t>(r.type);
    c.resource_name = *r.name;
    c.resource_pattern_type = static_cast<int8_t>(pattern);
    c.principal = args.get("principal");
    c.host = args.get("host", security::kWildcardHost);
    c.operation = static_cast<int8_t>(op);
    c.permission_type = static_cast<int8_t>(args.has("deny") ? AclPermissionType::deny : AclPermissionType::allow);
    req.creations.push_back(std::move(c));
  }
  Cluster cluster(ClientConfig::from(args));
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    return conn.call<CreateAclsApi>(req, conn.version<CreateAclsApi>());
  });
  if (resp.results.size() != req.creations.size()) throw std::runtime_error("CreateAcls answered for other bindings");
  for (size_t i = 0; i < resp.results.size(); ++i) {
    const auto& c = req.creations[i];
    check(resp.results[i].error_code,
          std::string("creating ") + security::name(security::acl_operation(c.operation)) + " for " + c.principal,
          resp.results[i].error_message.value_or(""));
    std::printf("created %s %s %s on %s %s (%s)\n",
                security::name(security::acl_permission_type(c.permission_type)), c.principal.c_str(),
                security::name(security::acl_operation(c.operation)), name_of(c.resource_type, security::name),
                c.resource_name.c_str(), security::name(security::pattern_type(c.resource_pattern_type)));
  }
  return kExitOk;
}

int list(const std::vector<std::string>& argv) {
  auto args = parse_command(kFilterOptions,
                            argv, "runnel acl list [filters] [-o json]",
                            "Lists the ACL bindings that match every filter given (kafka-acls.sh --list); "
                            "--pattern match also lists the wildcard and prefixed bindings that apply to the "
                            "resource named.");
  bool as_json = wants_json(args.get("output"));
  Filter f = filter_of(args);
  auto ops = operations_of(args, AclOperation::any);
  std::vector<std::vector<std::string>> rows;
  Cluster cluster(ClientConfig::from(args));
  for (AclOperation op : ops) {
    DescribeAclsRequest req;
    fill(req, f, op);
    auto resp = cluster.with_retries([&] {
      auto& conn = cluster.any();
      return conn.call<DescribeAclsApi>(req, conn.version<DescribeAclsApi>());
    });
    check(resp.error_code, "DescribeAcls", resp.error_message.value_or(""));
    for (const auto& res : resp.resources)
      for (const auto& a : res.acls)
        rows.push_back(row(res.resource_type, res.resource_name, res.pattern_type, a.principal, a.host, a.operation,
                           a.permission_type));
  }
  print_rows(rows, as_json);
  return kExitOk;
}

int remove(const std::vector<std::string>& argv) {
  auto args = parse_command(kFilterOptions,
                            argv, "runnel acl delete (--principal P|a resource) [filters] [-o json]",
                            "Deletes the ACL bindings that match every filter given and prints them "
                            "(kafka-acls.sh --remove). A principal or a resource is needed, so that an empty "
                            "command line never deletes every binding.");
  bool as_json = wants_json(args.get("output"));
  Filter f = filter_of(args);
  if (!f.principal && f.resource_type == static_cast<int8_t>(ResourceType::any))
    throw UsageError("name the bindings to delete: --principal or a resource (--topic, --group, --cluster, ...)");
  DeleteAclsRequest req;
  for (AclOperation op : operations_of(args, AclOperation::any)) {
    DeleteAclsRequest::DeleteAclsFilter d;
    fill(d, f, op);
    req.filters.push_back(std::move(d));
  }
  Cluster cluster(ClientConfig::from(args));
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    return conn.call<DeleteAclsApi>(req, conn.version<DeleteAclsApi>());
  });
  std::vector<std::vector<std::string>> rows;
  for (const auto& result : resp.filter_results) {
    check(result.error_code, "DeleteAcls", result.error_message.value_or(""));
    for (const auto& m : result.matching_acls) {
      check(m.error_code, "deleting a binding of " + m.principal, m.error_message.value_or(""));
      rows.push_back(row(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
                         m.permission_type));
    }
  }
  if (!as_json) std::printf("deleted %zu binding(s)\n", rows.size());
  print_rows(rows, as_json);
  return kExitOk;
}

}  // namespace

int acl_command(const std::vector<std::string>& args) {
  static constexpr Verb kVerbs[] = {{"create", create}, {"list", list}, {"delete", remove}};
  return dispatch_verb("acl", kVerbs, args);
}

}  // namespace runnel::cli
