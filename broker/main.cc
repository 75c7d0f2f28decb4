// runnel: the broker (`runnel serve`) and what the codec speaks (`runnel apis`).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "broker/admin/admin_server.h"
#include "broker/admin/metrics.h"
#include "broker/admin/rest/rest_server.h"
#include "broker/api_registry.h"
#include "broker/broker.h"
#include "broker/event_loop.h"
#include "broker/logging.h"
#include "broker/scram_credential_manager.h"
#include "broker/server.h"
#include "cli/cli_main.h"
#include "protocol/messages/all_apis.h"

using namespace runnel::broker;

namespace {

// Settings that only a cluster acts on: set on a single node, they are reported.
constexpr const char* kClusterOnly[] = {"runnel.etcd.prefix",          "runnel.etcd.request.timeout.ms",
                                        "broker.session.timeout.ms",   "broker.heartbeat.interval.ms",
                                        "controlled.shutdown.enable",  "auto.leader.rebalance.enable",
                                        "leader.imbalance.check.interval.seconds",
                                        "leader.imbalance.per.broker.percentage",
                                        "num.replica.fetchers",        "replica.fetch.max.bytes",
                                        "replica.fetch.min.bytes",     "replica.fetch.wait.max.ms",
                                        "replica.fetch.response.max.bytes", "replica.fetch.backoff.ms",
                                        "replica.lag.time.max.ms",     "replica.socket.timeout.ms",
                                        "inter.broker.listener.name"};

int usage() {
  std::fprintf(stderr,
               "usage: runnel serve [server.properties] [--override key=value ...]\n"
               "       runnel apis    the APIs and versions the broker serves and the codec speaks\n%s",
               runnel::cli::cli_usage());
  return 2;
}

int list_apis() {
  runnel::protocol::for_each_api([](auto api) {
    using Api = decltype(api);
    const ApiRoute* r = find_route(Api::key);
    std::printf("%3d %-28s codec v%d-%d", Api::key, Api::name, Api::min_version, Api::max_version);
    if (Api::flexible_from <= Api::max_version) std::printf(" (flexible v%d+)", Api::flexible_from);
    if (r)
      std::printf("  served v%d-%d\n", r->min_version, r->max_version);
    else
      std::printf("  not served\n");
  });
  return 0;
}

int serve(int argc, char** argv) {
  std::map<std::string, std::string> props;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--override") {
      if (i + 1 >= argc) return usage();
      std::string kv = argv[++i];
      auto eq = kv.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "runnel: --override takes key=value, got '%s'\n", kv.c_str());
        return 2;
      }
      props[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (i == 2) {
      std::ifstream in(arg);
      if (!in) {
        std::fprintf(stderr, "runnel: cannot read %s\n", arg.c_str());
        return 2;
      }
      std::stringstream ss;
      ss << in.rdbuf();
      auto file = BrokerConfig::parse_properties(ss.str());
      for (auto& [k, v] : file) props.emplace(k, v);  // overrides win
    } else {
      return usage();
    }
  }
  try {
    BrokerConfig config = BrokerConfig::from(props);
    for (const auto& k : config.unknown_keys())
      RLOG_WARN("unknown configuration '%s' was supplied but is not used by Runnel", k.c_str());
    for (const auto& [k, why] : config.accepted_not_acted_on())
      RLOG_WARN("configuration '%s' is accepted but not acted on: %s", k.c_str(), why.c_str());
    if (!config.is_set("runnel.etcd.endpoints"))
      for (const char* k : kClusterOnly)
        if (config.is_set(k)) RLOG_WARN("configuration '%s' only applies to a cluster (runnel.etcd.endpoints is not set)", k);
    EventLoop io(1);
    Broker broker(io, std::move(config));
    Server server(io, broker);
    server.bind();
    // Ready once the logs are open (Broker's constructor), the listeners
    // bound and, in a cluster, the broker registered under a live lease; no
    // longer once it begins to shut down.
    bool started = false;
    auto ready = [&] {
      if (!started || broker.stopping()) return false;
      return !broker.in_cluster() || (broker.cluster_member() && broker.cluster_member()->registered());
    };
    admin::rest::RestService rest(broker);
    admin::AdminAuthenticator admin_auth(broker.config(), [&](const std::string& user, auto mechanism) {
      return broker.scram_credentials().credential(user, mechanism);
    });
    admin::AdminState admin_state{ready,
                                  [&] { return admin::render_metrics(broker); },
                                  [&](std::string_view path) { return admin::status_json(broker, path); },
                                  &rest,
                                  admin::admin_ssl_context(broker.config()),
                                  &admin_auth};
    admin::AdminServer admin_server(io, std::move(admin_state));
    admin_server.bind(admin::admin_listeners(broker.config()));
    broker.join_cluster();
    broker.start_background_work();
    started = true;
    admin_server.start();
    RLOG_INFO("runnel node %d started (cluster id %s, %zu topics)", broker.node_id(), broker.cluster_id().c_str(),
              broker.topics().topics().size());
    server.run();
    broker.join_blocking_work();
    io.drop_pending();  // before the broker goes: event_loop.h
    RLOG_INFO("runnel stopped cleanly");
    return 0;
  } catch (const ConfigError& e) {
    RLOG_ERROR("%s", e.what());
    return 1;
  } catch (const std::exception& e) {
    RLOG_ERROR("fatal: %s", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that closes while a response is being sent must cost only that
  // connection: sendfile(2) has no MSG_NOSIGNAL, so SIGPIPE is ignored.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) return usage();
  if (std::strcmp(argv[1], "apis") == 0) return list_apis();
  if (std::strcmp(argv[1], "serve") == 0) return serve(argc, argv);
  if (runnel::cli::is_cli_command(argv[1])) return runnel::cli::cli_main(argc, argv);
  return usage();
}
