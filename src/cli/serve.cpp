// `tandem serve`: the OpenAI- and Anthropic-compatible HTTP server. Listens at once (GET /health
// answers 503 while the model loads), serves with continuous batching over --parallel slots, and
// shuts down gracefully on SIGTERM / SIGINT.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/file_digest.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "engine/engine.h"
#include "grammar/grammar_cache.h"
#include "server/backend.h"
#include "server/http_server.h"
#include "server/response_store.h"
#include "server/server_app.h"

namespace tandem::cli {
namespace {

struct ServeArgs {
  ModelOptions model;
  SamplingParams sampling;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::vector<std::string> api_keys;
  std::string api_key_file;
  int parallel = 4;
  int max_queue = 64;
  int prefill_chunk = 256;
  int n_predict = -1;
  size_t body_limit = 0;  // 0: 8 MiB, or 64 MiB with -mm (images travel as base64)
  std::vector<std::string> aliases;
  int max_connections = 256;
  double head_timeout = 10.0;
  double body_timeout = 30.0;
  double idle_timeout = 5.0;
  std::vector<std::string> cors_origins;
  std::vector<std::string> allowed_hosts;
  double shutdown_timeout = 10.0;
  bool json_one_line = false;
  std::string slot_save_path;  // directory of saved slot files; empty: save/restore refused
  std::string slot_restore;    // a saved slot file restored into every slot at start
  // The Responses API's store (store, previous_response_id, GET/DELETE /v1/responses/{id});
  // either limit 0: off.
  size_t responses_store_count = 1000;
  size_t responses_store_bytes = size_t{64} << 20;
};

std::vector<std::string> ReadKeyFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open the API key file");
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(" \t\r");
    const size_t e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) keys.push_back(line.substr(b, e - b + 1));
  }
  if (keys.empty()) Fail(ErrorKind::kInvalidArgument, path + ": no API key in the file");
  return keys;
}

// Blocks SIGTERM and SIGINT in this thread and every thread started after, so sigwait sees them.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Ends the queue at once (its requests get 503), lets running requests end for up to `seconds`,
// then cancels what is left.
void DrainEngine(Engine& engine, double seconds) {
  engine.StopAdmitting();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const EngineMetrics m = engine.Metrics();
    if (m.busy_slots == 0 && m.queue_depth == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  engine.Shutdown(/*finish=*/false);
}

int Serve(ServeArgs a, const CLI::App& app) {
  if (a.parallel < 1) Fail(ErrorKind::kInvalidArgument, "--parallel must be >= 1");
  if (a.max_queue < 0) Fail(ErrorKind::kInvalidArgument, "--max-queue must be >= 0");
  if (!a.slot_save_path.empty() && !std::filesystem::is_directory(a.slot_save_path)) {
    Fail(ErrorKind::kInvalidArgument,
         "--slot-save-path " + a.slot_save_path + " is not an existing directory");
  }
  if (!a.api_key_file.empty()) {
    for (std::string& k : ReadKeyFile(a.api_key_file)) a.api_keys.push_back(std::move(k));
  }
  const bool loopback = a.host == "127.0.0.1" || a.host == "localhost" || a.host == "::1";
  if (!loopback && a.api_keys.empty()) {
    LogWarn("serving on " + a.host + " without --api-key: anyone who can reach it can use it");
  }
  const sigset_t stop_signals = BlockStopSignals();

  server::ServerOptions options;
  options.api_keys = a.api_keys;
  options.max_body_bytes = a.body_limit > 0
                               ? a.body_limit
                               : (a.model.mmproj.empty() ? size_t{8} << 20 : size_t{64} << 20);
  options.cors_origins = a.cors_origins;
  if (loopback) {  // DNS rebinding: a page on another name must not reach a local server
    options.allowed_hosts = {"localhost", "127.0.0.1", "::1"};
    for (const std::string& h : a.allowed_hosts) options.allowed_hosts.push_back(h);
  } else if (!a.allowed_hosts.empty()) {
    options.allowed_hosts = a.allowed_hosts;
  }
  server::ServerApp server_app(options);
  server::HttpServer http(server_app, {.host = a.host,
                                       .port = a.port,
                                       .max_connections = a.max_connections,
                                       .head_timeout_seconds = a.head_timeout,
                                       .body_timeout_seconds = a.body_timeout,
                                       .idle_timeout_seconds = a.idle_timeout});
  const int port = http.Bind();
  http.Start();
  std::fprintf(stderr, "tandem serve: listening on http://%s:%d (loading %s)\n", a.host.c_str(),
               port, a.model.model.c_str());

  LoadedModels m = LoadModels(a.model, app);
  EngineOptions engine_options;
  engine_options.n_slots = a.parallel;
  engine_options.kv = m.kv;
  engine_options.max_queue = a.max_queue;
  engine_options.prefill_chunk = a.prefill_chunk;
  engine_options.spec = m.spec;
  engine_options.warmup = !a.model.no_warmup;
  if (!a.slot_save_path.empty() || !a.slot_restore.empty()) {
    engine_options.model_digest = FileDigest(a.model.model);
  }
  Engine engine(*m.target, m.Drafters(), *m.pool, engine_options);
  server::EngineBackend backend(engine);
  if (!a.slot_restore.empty()) {  // every slot starts with the file's prompt cache
    int n_restored = 0;
    for (int slot = 0; slot < a.parallel; ++slot) {
      n_restored = engine.RestoreSlot(slot, a.slot_restore).n_tokens;
    }
    std::fprintf(stderr, "tandem serve: restored %d cached positions from %s into %d slots\n",
                 n_restored, a.slot_restore.c_str(), a.parallel);
  }

  server::RouteContext context;
  context.backend = &backend;
  context.tokenizer = m.tokenizer.get();
  context.grammars = std::make_shared<GrammarCache>(*m.tokenizer);
  context.limits.n_ctx = m.kv.n_ctx;
  context.limits.default_n_predict = a.n_predict;
  context.limits.spec = m.spec;
  // 26B/31B (no per-layer embeddings) take an empty thought block when thinking is off.
  context.limits.render.empty_thought_when_thinking_off = m.target->config().n_embd_per_layer == 0;
  context.default_sampling = a.sampling;
  context.json_one_line = a.json_one_line;
  context.images = m.images.get();
  context.audio = m.audio.get();
  context.slot_save_path = a.slot_save_path;
  if (a.responses_store_count > 0 && a.responses_store_bytes > 0) {
    context.responses =
        std::make_shared<server::ResponseStore>(a.responses_store_count, a.responses_store_bytes);
  }
  const std::filesystem::path model_path(a.model.model);
  context.model_id = model_path.filename().string();
  if (!a.model.model_draft.empty()) {
    context.assistant_id = std::filesystem::path(a.model.model_draft).filename().string();
  }
  context.model_names = {context.model_id, model_path.stem().string()};
  for (const std::string& alias : a.aliases) context.model_names.push_back(alias);
  server_app.SetReady(context);
  std::fprintf(stderr,
               "tandem serve: ready on http://%s:%d, model %s, %d slots x %d tokens, "
               "speculation %s, load %.0f ms\n",
               a.host.c_str(), port, context.model_id.c_str(), a.parallel, m.kv.n_ctx,
               SpecTypeName(m.spec.type), m.load_ms);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr,
               "tandem serve: signal %d, shutting down (up to %.0f s for running requests)\n",
               signal_number, a.shutdown_timeout);
  // A second signal ends the process at once.
  std::thread([stop_signals] {
    int again = 0;
    sigwait(&stop_signals, &again);
    std::fprintf(stderr, "tandem serve: second signal %d, exiting now\n", again);
    std::_Exit(128 + again);
  }).detach();
  server_app.BeginShutdown();
  http.StopAccepting();
  DrainEngine(engine, a.shutdown_timeout);
  // Requests ended by the engine (finished or cancelled) still write their last bytes.
  if (!http.WaitIdle(5.0)) LogWarn("tandem serve: some responses were still being sent");
  http.Stop();
  std::fprintf(stderr, "tandem serve: stopped\n");
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand(
      "serve", "OpenAI- and Anthropic-compatible HTTP server (continuous batching, MTP per slot)");
  auto a = std::make_shared<ServeArgs>();
  AddModelFlags(*sub, a->model);
  AddSamplingFlags(*sub, a->sampling);
  sub->add_option("--host", a->host, "Address to listen on")->capture_default_str();
  sub->add_option("--port", a->port, "Port (0: any free port, printed at start)")
      ->capture_default_str();
  sub->add_option("--api-key", a->api_keys,
                  "API key clients must send (Authorization: Bearer or x-api-key); repeatable");
  sub->add_option("--api-key-file", a->api_key_file, "File with one API key per line");
  sub->add_option("--parallel,--n-parallel", a->parallel,
                  "Slots: requests generated at once (continuous batching)")
      ->capture_default_str();
  sub->add_option("--max-queue", a->max_queue,
                  "Requests waiting for a slot beyond which new ones get 503")
      ->capture_default_str();
  sub->add_option("--prefill-chunk", a->prefill_chunk, "Most prompt tokens one slot adds per step")
      ->capture_default_str();
  sub->add_option("-n,--n-predict", a->n_predict,
                  "Default max tokens per request (-1: until end of text or context)")
      ->capture_default_str();
  sub->add_option("--body-limit", a->body_limit,
                  "Largest request body in bytes, else 413 (0: 8 MiB, 64 MiB with -mm)")
      ->capture_default_str();
  sub->add_option("--alias", a->aliases, "Another model name requests may use; repeatable");
  sub->add_option("--max-connections", a->max_connections,
                  "Open connections at once (each has a thread); more get 503 and are closed")
      ->capture_default_str();
  sub->add_option("--header-timeout", a->head_timeout,
                  "Seconds a request's headers may take from their first byte (else 408)")
      ->capture_default_str();
  sub->add_option("--body-timeout", a->body_timeout,
                  "Seconds a request's body may take after its headers (else 408)")
      ->capture_default_str();
  sub->add_option("--idle-timeout", a->idle_timeout,
                  "Seconds an idle keep-alive connection stays open")
      ->capture_default_str();
  sub->add_option("--cors-origin", a->cors_origins,
                  "Origin browsers may call from (\"*\": any); repeatable. Default: no CORS");
  sub->add_option("--allow-host", a->allowed_hosts,
                  "Host header name accepted besides localhost when listening on loopback "
                  "(DNS-rebinding guard); repeatable");
  sub->add_option("--shutdown-timeout", a->shutdown_timeout,
                  "Seconds running requests get to finish on SIGTERM before they are cancelled")
      ->capture_default_str();
  sub->add_flag("--json-one-line,--disable-any-whitespace", a->json_one_line,
                "JSON constraints (response_format, json_schema) with fixed whitespace (`, ` and "
                "`: `, no newlines; vLLM's disable_any_whitespace), so keys and separators are "
                "forced and drafted for free; a request's structured_outputs."
                "disable_any_whitespace overrides it");
  sub->add_option("--slot-save-path", a->slot_save_path,
                  "Directory of saved slot files: enables POST /slots/{id}?action=save|restore "
                  "(without it those answer 501)");
  sub->add_option("--slot-restore", a->slot_restore,
                  "Saved slot file restored into every slot at start (its prompt prefix is then "
                  "cached on every replica); refused if saved by another model or KV type");
  sub->add_option("--responses-store-count", a->responses_store_count,
                  "Responses API: most responses kept in memory for previous_response_id and "
                  "GET /v1/responses/{id}, least recently used evicted first (0: no store; "
                  "store: true and previous_response_id are then 400s)")
      ->capture_default_str();
  sub->add_option("--responses-store-bytes", a->responses_store_bytes,
                  "Responses API: most bytes of kept responses, each with its whole conversation "
                  "(0: no store). Requests without \"store\" are stored while the store is on")
      ->capture_default_str();
  sub->callback([&runner, a, sub] { runner = [a, sub] { return Serve(*a, *sub); }; });
}

}  // namespace tandem::cli
