// Why a generation ended: one value per cause, named once. The server maps it to the APIs'
// finish_reason / stop_reason (server/generation_stream.cpp), the CLI prints its name.
#pragma once

namespace tandem {

enum class StopReason {
  kNone,        // not stopped (yet)
  kEog,         // an end-of-generation token was emitted
  kLength,      // n_predict tokens were generated
  kContext,     // the context is full
  kStopped,     // the caller's callback returned false (on_token / on_event)
  kStopString,  // the caller matched a stop string in the text (set by callers, not the engine)
  kCancelled,   // Cancel(), shutdown, or a request that never left the queue
  kError,       // the request failed (EngineEvent::error says why)
};

// "eog", "length", "context", "stopped", "stop", "cancelled", "error" ("" for kNone): the names
// of `tandem run --json` and the reports.
constexpr const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNone:
      return "";
    case StopReason::kEog:
      return "eog";
    case StopReason::kLength:
      return "length";
    case StopReason::kContext:
      return "context";
    case StopReason::kStopped:
      return "stopped";
    case StopReason::kStopString:
      return "stop";
    case StopReason::kCancelled:
      return "cancelled";
    case StopReason::kError:
      return "error";
  }
  return "";
}

}  // namespace tandem
