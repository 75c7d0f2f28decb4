// The client subcommands of the `runnel` binary: topic, produce, consume,
// group, cluster. broker/main.cc hands them argv when is_cli_command().
#pragma once

namespace runnel::cli {

bool is_cli_command(const char* name);

// Runs `runnel <command> ...`; returns the exit code (cli/kafka_errors.h).
int cli_main(int argc, char** argv);

// The lines `runnel` prints in its own usage.
const char* cli_usage();

}  // namespace runnel::cli
