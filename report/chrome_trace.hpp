#pragma once
// Chrome trace-event JSON of one run (loads in Perfetto and chrome://tracing):
// one track per task, yield points as slices of one microsecond per engine
// step, blocked time as slices, story notes as instants, I/O in flight as
// async slices on the device track, and the power cut as a global marker.
// The time axis is the engine step (1 us each); virtual time is in the args.
#include <string>

#include "runner/runner.hpp"

namespace report {

auto chrome_trace_json(const runner::RunOutcome& outcome, const std::string& title) -> std::string;

}  // namespace report
