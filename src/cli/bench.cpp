// `tandem bench`: llama-bench-style throughput (pp = prompt processing, tg = generation) with the
// implied memory bandwidth, and with --spec plain vs speculative decoding in one run: per draft
// length, adaptive, the verification cost curve and synthetic-acceptance runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "cli/verify_roofline.h"
#include "engine/generator.h"
#include "gguf/gguf_reader.h"
#include "kernels/isa.h"
#include "kernels/machine_limits.h"
#include "media/vision_preprocess.h"

namespace tandem::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchArgs {
  ModelOptions model;
  int n_prompt = 512;
  int n_gen = 128;
  int n_depth = 0;  // tokens already in the context when pp, tg and --spec are timed (-d)
  int repetitions = 3;
  bool json = false;
  bool spec = false;
  std::string draft_lengths = "1,2,3,4,6,8";
  std::string synthetic = "0.8,0.7,0.6";
  std::string spec_prompt;  // text prompt of the --spec runs; empty: 32 pseudo-random tokens
};

struct Sample {
  double mean = 0, sd = 0;
};

Sample Stats(const std::vector<double>& v) {
  Sample s;
  for (double x : v) s.mean += x;
  s.mean /= v.size();
  for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(s.sd / (v.size() - 1)) : 0;
  return s;
}

std::vector<float> ParseList(const std::string& text) {
  std::vector<float> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(std::stof(item));
  }
  return out;
}

std::vector<int32_t> Tokens(int n, int n_vocab, uint32_t seed) {
  std::vector<int32_t> t(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    t[i] = static_cast<int32_t>(x % static_cast<uint64_t>(n_vocab));
  }
  if (n > 0) t[0] = 2;  // BOS
  return t;
}

// "pp512", or "pp512 @ d4096" after a depth (llama-bench's label).
std::string Label(const char* what, int n, int depth) {
  std::string label = what + std::to_string(n);
  if (depth > 0) label += " @ d" + std::to_string(depth);
  return label;
}

GenerateParams GreedyParams(int n) {
  GenerateParams p;
  p.n_predict = n;
  p.sampling.temperature = 0;
  p.sampling.seed = 1;
  return p;
}

// Memory read bandwidth with all pool threads (bytes/s): the physical limit for decoding. 512 MiB,
// best of three reads: one probe runs after every decode run.
double MeasureBandwidth(ThreadPool& pool) {
  return kernels::MeasureReadBandwidth(pool, size_t{512} << 20, 3);
}

// The matmuls' multiply-adds of a prefill of `n` rows: every matrix for every row, the output
// head for the last row only.
double PrefillMultiplyAdds(const Gemma4Model& target, int n) {
  double per_row = 0, head = 0;
  for (const MatrixUse& use : target.weights().MatricesPerRow(target.config())) {
    const double macs = static_cast<double>(use.matrix.rows) * use.matrix.cols * use.per_row;
    (use.matrix.data == target.weights().output.data ? head : per_row) += macs;
  }
  return per_row * n + head;
}

// Whether every matrix multiplies in int8 (quantized weights against int8 activations): only
// then is the int8 peak their ceiling. Float weights (F32, F16, BF16) multiply in f32.
bool MatMulsInInt8(const Gemma4Model& target) {
  for (const MatrixUse& use : target.weights().MatricesPerRow(target.config())) {
    const TensorType t = use.matrix.type;
    if (t == TensorType::kF32 || t == TensorType::kF16 || t == TensorType::kBF16) return false;
  }
  return true;
}

int RunBench(const BenchArgs& a, const CLI::App& app) {
  if (!a.spec && !a.model.model_draft.empty()) {
    LogWarn("-md " + a.model.model_draft +
            " is loaded but pp and tg decode plainly: add --spec for plain vs speculative runs");
  }
  LoadedModels m = LoadModels(a.model, app);
  const Gemma4Model& target = *m.target;
  const int V = target.config().n_vocab;
  KvCacheOptions kv = m.kv;
  // The --spec runs' prompt: the depth's tokens, then the text prompt or 32 pseudo-random tokens.
  // One BOS, at the start.
  std::vector<int32_t> spec_prompt;
  if (a.spec && a.spec_prompt.empty()) {
    spec_prompt = Tokens(a.n_depth + 32, V, 7);
  } else if (a.spec) {
    spec_prompt = Tokens(a.n_depth, V, 11);
    const std::vector<int32_t> text =
        m.tokenizer->Encode(a.spec_prompt, {.add_special = a.n_depth == 0});
    spec_prompt.insert(spec_prompt.end(), text.begin(), text.end());
  }
  // Room for the depth and what is timed after it (as llama-bench sizes its context), and for
  // the --spec runs' prompt, generation and a last draft.
  kv.n_ctx = std::max(kv.n_ctx, a.n_depth + std::max(a.n_prompt, a.n_gen) + 1);
  if (a.spec) {
    kv.n_ctx = std::max(kv.n_ctx, static_cast<int>(spec_prompt.size()) + a.n_gen + 64);
    // A sliding-window layer's ring keeps max_batch rows past its window: the runs' tokens must
    // fit there for the cache to return to the depth after each run.
    if (a.n_depth > 0) kv.max_batch = std::max(kv.max_batch, a.n_gen + 64);
  }
  kv.max_batch = std::max(kv.max_batch, std::min(a.n_prompt, kv.n_ctx));
  nlohmann::json report;
  report["model"] = a.model.model;
  report["cpu"] = HostCpuFeatures().ToString();
  report["isa"] = kernels::ActivePathName();
  report["threads"] = m.pool->size();
  report["depth"] = a.n_depth;
  report["kv_type"] = std::string(TensorTypeName(kv.type));
  // The probe runs before the runs and after each decode run, and the best reading counts: a
  // shared VM's bandwidth drifts, and a low reading would flatter the decode's fraction of it.
  double bandwidth = MeasureBandwidth(*m.pool);
  report["membw_before_gb_s"] = bandwidth / 1e9;
  const double bytes_per_token = target.BytesPerToken();
  report["bytes_per_token"] = bytes_per_token;
  report["load_ms"] = m.load_ms;
  report["packed_bytes"] = m.packed_bytes;

  Generator gen(target, {}, *m.pool, kv, !a.model.no_warmup);
  if (a.n_prompt > 0) {
    std::vector<double> tps;
    int timed = 0;  // prompt tokens evaluated in the timed call (the depth served by the cache)
    for (int r = 0; r < a.repetitions; ++r) {
      gen.Reset();
      // The depth first (untimed), then the prompt after it: the cache serves the depth.
      if (a.n_depth > 0) gen.Generate(Tokens(a.n_depth, V, r), GreedyParams(0), nullptr);
      GenerateResult res =
          gen.Generate(Tokens(a.n_depth + a.n_prompt, V, r), GreedyParams(0), nullptr);
      timed = a.n_depth + a.n_prompt - res.cached_prompt_tokens;
      tps.push_back(timed * 1000.0 / res.prompt_ms);
    }
    Sample s = Stats(tps);
    // The prompt's matmul multiply-adds per second (the head runs for the last row only; the
    // attention's are left out), against the int8 peak when every matrix multiplies in int8.
    const double gmacs = s.mean * PrefillMultiplyAdds(target, timed) / timed / 1e9;
    report["pp"] = {{"n", a.n_prompt},
                    {"matmul_gmacs", gmacs},
                    {"tokens_timed", timed},
                    {"tok_s", s.mean},
                    {"sd", s.sd},
                    {"resident_bytes", ResidentBytes()},
                    {"kv_bytes", gen.cache().bytes()}};
    if (MatMulsInInt8(target)) {
      const double int8_peak = kernels::MeasureInt8Peak(*m.pool);
      report["int8_peak_gmacs"] = int8_peak / 1e9;
      report["pp"]["fraction_of_int8_peak"] = gmacs * 1e9 / int8_peak;
    }
  }
  if (a.n_gen > 0) {
    // Each run is also set against the probes just before and after it (the better of the
    // two): a shared VM's bandwidth drifts within a minute, so a probe far from a run says
    // little about it.
    std::vector<double> tps, adjacent;
    double before = a.n_prompt > 0 ? MeasureBandwidth(*m.pool) : bandwidth, after = before;
    bandwidth = std::max(bandwidth, before);
    for (int r = 0; r < a.repetitions; ++r) {
      gen.Reset();
      GenerateResult res =
          gen.Generate(Tokens(a.n_depth + 1, V, r), GreedyParams(a.n_gen), nullptr);
      tps.push_back(res.tokens.size() * 1000.0 / res.generate_ms);
      after = MeasureBandwidth(*m.pool);
      adjacent.push_back(tps.back() * bytes_per_token / std::max(before, after));
      bandwidth = std::max(bandwidth, after);
      before = after;
    }
    report["membw_after_gb_s"] = after / 1e9;
    std::sort(adjacent.begin(), adjacent.end());
    Sample s = Stats(tps);
    report["tg"] = {{"n", a.n_gen},
                    {"tok_s", s.mean},
                    {"sd", s.sd},
                    {"gb_s", s.mean * bytes_per_token / 1e9},
                    {"fraction_of_membw", s.mean * bytes_per_token / bandwidth},
                    {"fraction_of_adjacent_membw", adjacent[adjacent.size() / 2]},
                    {"limit_tok_s", bandwidth / bytes_per_token},
                    // Steady decode: mapped weight pages read so far, the KV cache, the rest.
                    {"resident_bytes", ResidentBytes()},
                    {"kv_bytes", gen.cache().bytes()}};
  }

  report["membw_gb_s"] = bandwidth / 1e9;

  if (a.spec) {
    if (m.spec.type == SpecType::kNone) {
      Fail(ErrorKind::kInvalidArgument, "--spec needs a drafter (-md) with speculation on");
    }
    Generator sg(target, m.Drafters(), *m.pool, kv, !a.model.no_warmup);
    const std::vector<int32_t>& prompt = spec_prompt;
    // At a depth the cache serves it to every run (prefilled once, untimed, speculating so that
    // a draft model's own cache catches up too); without one each run evaluates its short prompt
    // afresh.
    if (a.n_depth > 0) {
      GenerateParams warm = GreedyParams(2);
      warm.spec = m.spec;
      sg.Generate(prompt, warm, nullptr);
    }
    // One generation per configuration per repetition, the configurations interleaved, so a
    // drift of the machine's speed (shared hosts) hits every configuration alike.
    struct Config {
      SpecType type;
      int n_draft;
      bool adaptive;
      std::vector<float> synthetic;
    };
    auto run_all = [&](const std::vector<Config>& configs) {
      std::vector<std::vector<double>> tps(configs.size());
      std::vector<GenerateResult> last(configs.size());
      for (int r = 0; r < a.repetitions; ++r) {
        for (size_t c = 0; c < configs.size(); ++c) {
          if (a.n_depth == 0) sg.Reset();
          GenerateParams p = GreedyParams(a.n_gen);
          p.spec = m.spec;
          p.spec.type = configs[c].type;
          p.spec.draft_max = std::max(1, configs[c].n_draft);
          p.spec.adaptive = configs[c].adaptive;
          p.synthetic_acceptance = configs[c].synthetic;
          last[c] = sg.Generate(prompt, p, nullptr);
          if (a.n_depth > 0 && last[c].cached_prompt_tokens < a.n_depth) {
            LogWarn("the cache served " + std::to_string(last[c].cached_prompt_tokens) +
                    " prompt tokens of a --spec run, not the depth " + std::to_string(a.n_depth) +
                    ": the run prefilled it again (untimed)");
          }
          tps[c].push_back(last[c].tokens.size() * 1000.0 / last[c].generate_ms);
        }
      }
      std::vector<nlohmann::json> out;
      for (size_t c = 0; c < configs.size(); ++c) {
        const Sample st = Stats(tps[c]);
        nlohmann::json j = last[c].spec.ToJson();
        j["cached_prompt_tokens"] = last[c].cached_prompt_tokens;
        j["tok_s"] = st.mean;
        j["sd"] = st.sd;
        out.push_back(j);
      }
      return out;
    };
    const std::vector<float> lengths = ParseList(a.draft_lengths);
    auto configs_for = [&](const std::vector<float>& synthetic) {
      std::vector<Config> configs;
      for (float nf : lengths)
        configs.push_back({m.spec.type, static_cast<int>(nf), false, synthetic});
      configs.push_back({m.spec.type, m.spec.draft_max, true, synthetic});
      return configs;
    };
    nlohmann::json spec;
    spec["prompt_tokens"] = prompt.size();
    spec["depth"] = a.n_depth;
    std::vector<Config> configs = configs_for({});
    configs.insert(configs.begin(), Config{SpecType::kNone, 0, false, {}});
    const std::vector<nlohmann::json> results = run_all(configs);
    const double plain = results[0]["tok_s"];
    spec["plain_tok_s"] = plain;
    for (size_t i = 0; i < lengths.size(); ++i) {
      nlohmann::json j = results[1 + i];
      j["speedup"] = j["tok_s"].get<double>() / plain;
      spec["fixed"][std::to_string(static_cast<int>(lengths[i]))] = j;
    }
    nlohmann::json ad = results.back();
    ad["speedup"] = ad["tok_s"].get<double>() / plain;
    spec["adaptive"] = ad;

    // Verification cost: a forward of T rows after a 64-token context, relative to T = 1.
    auto cache = target.NewKvCache(kv);
    ForwardBatch batch;
    ForwardOutput out;
    const std::vector<int32_t> ctx = Tokens(64, V, 3);
    for (int i = 0; i < 64; ++i) batch.Add(ctx[i], i, 0, false);
    target.Forward(batch, *cache, out, *m.pool);
    std::vector<double> cost;
    for (int T = 1; T <= 16; ++T) {
      std::vector<double> ms;
      for (int r = 0; r < std::max(3, a.repetitions); ++r) {
        batch.Clear();
        for (int i = 0; i < T; ++i) batch.Add(ctx[i], 64 + i, 0, true);
        auto t0 = Clock::now();
        target.Forward(batch, *cache, out, *m.pool);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        cache->Truncate(0, 64);
      }
      cost.push_back(*std::min_element(ms.begin(), ms.end()));
    }
    spec["verify_ms_by_rows"] = cost;
    spec["verify_roofline"] = VerifyRoofline(target, bandwidth, cost, *m.pool);
    const double t1 = cost[0] > 0 ? cost[0] : 1;
    for (double& c : cost) c /= t1;
    spec["verify_cost_vs_t1"] = cost;

    for (float rate : ParseList(a.synthetic)) {
      const std::vector<nlohmann::json> r = run_all(configs_for({rate}));
      nlohmann::json sj;
      double best = 0;
      for (size_t i = 0; i < lengths.size(); ++i) {
        const double speedup = r[i]["tok_s"].get<double>() / plain;
        sj["fixed"][std::to_string(static_cast<int>(lengths[i]))] = speedup;
        best = std::max(best, speedup);
      }
      sj["adaptive"] = r.back()["tok_s"].get<double>() / plain;
      sj["best_fixed"] = best;
      char key[16];
      std::snprintf(key, sizeof key, "%.2f", rate);
      spec["synthetic"][key] = sj;
    }
    report["spec"] = spec;
  }

  // With -mm: the vision tower's encode of one image of the size --image-budget gives (a square
  // image, prepared as the server would), timed like the other runs.
  if (m.vision) {
    const int budget = a.model.image_budget;
    RgbImage picture;
    picture.width = picture.height = 672;
    picture.rgb.resize(size_t{672} * 672 * 3);
    for (size_t i = 0; i < picture.rgb.size(); ++i)
      picture.rgb[i] = static_cast<uint8_t>(i * 7 % 251);
    VisionPreprocessOptions prepare = m.images->options().prepare;
    const VisionPixels px = PrepareImage(picture, prepare);
    std::vector<double> ms;
    for (int r = 0; r < a.repetitions; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<float> rows = m.vision->Encode(px.rgb.data(), px.width, px.height, *m.pool);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    report["image_encode"] = {{"width", px.width},
                              {"height", px.height},
                              {"tokens", px.tokens},
                              {"budget", budget},
                              {"median_ms", ms[ms.size() / 2]},
                              {"images_per_second", 1000.0 / ms[ms.size() / 2]}};
  }

  if (a.json) {
    std::printf("%s\n", report.dump(1).c_str());
    return 0;
  }
  if (report.contains("image_encode")) {
    const nlohmann::json& e = report["image_encode"];
    std::printf("image encode %dx%d (%d soft tokens): %.1f ms median, %.2f images/s\n",
                e["width"].get<int>(), e["height"].get<int>(), e["tokens"].get<int>(),
                e["median_ms"].get<double>(), e["images_per_second"].get<double>());
  }
  std::printf("model %s | %s | %d threads | KV %s\n", a.model.model.c_str(),
              report["isa"].get<std::string>().c_str(), m.pool->size(),
              report["kv_type"].get<std::string>().c_str());
  std::printf("memory bandwidth %.1f GB/s", bandwidth / 1e9);
  if (report.contains("membw_after_gb_s")) {
    std::printf(" (best of the probes; %.1f before the first decode run, %.1f after the last)",
                report["membw_before_gb_s"].get<double>(),
                report["membw_after_gb_s"].get<double>());
  }
  std::printf("; %.1f MB of weights read per generated token\n", bytes_per_token / 1e6);
  std::printf("load %.0f ms; %.1f MB of weights repacked into RAM%s\n", m.load_ms,
              m.packed_bytes / 1e6, a.model.no_repack ? " (--no-repack)" : "");
  if (report.contains("pp")) {
    const auto& pp = report["pp"];
    std::printf("%-7s %9.2f ± %.2f tok/s  resident after prefill %.0f MB (KV %.0f MB)\n",
                Label("pp", a.n_prompt, a.n_depth).c_str(), pp["tok_s"].get<double>(),
                pp["sd"].get<double>(), pp["resident_bytes"].get<double>() / 1e6,
                pp["kv_bytes"].get<double>() / 1e6);
    if (pp.contains("fraction_of_int8_peak")) {
      std::printf("        matmuls %.1f G multiply-adds/s = %.0f%% of the int8 peak (%.1f G/s)\n",
                  pp["matmul_gmacs"].get<double>(), 100 * pp["fraction_of_int8_peak"].get<double>(),
                  report["int8_peak_gmacs"].get<double>());
    } else {
      std::printf(
          "        matmuls %.1f G multiply-adds/s (float weights: f32 multiplies, no int8 "
          "peak)\n",
          pp["matmul_gmacs"].get<double>());
    }
  }
  if (report.contains("tg")) {
    const auto& tg = report["tg"];
    std::printf(
        "%-7s %9.2f ± %.2f tok/s  %.1f GB/s = %.0f%% of membw (limit %.1f tok/s); median run "
        "%.0f%% of the probes next to it%s\n",
        Label("tg", a.n_gen, a.n_depth).c_str(), tg["tok_s"].get<double>(), tg["sd"].get<double>(),
        tg["gb_s"].get<double>(), 100 * tg["fraction_of_membw"].get<double>(),
        tg["limit_tok_s"].get<double>(), 100 * tg["fraction_of_adjacent_membw"].get<double>(),
        a.n_depth > 0 ? " (weights only: the KV cache read at this depth is not counted)" : "");
    const double resident = tg["resident_bytes"].get<double>(), kv_b = tg["kv_bytes"].get<double>();
    std::printf(
        "resident %.0f MB at steady decode = weights read per token %.0f MB + KV %.0f MB + "
        "%.0f MB other\n",
        resident / 1e6, bytes_per_token / 1e6, kv_b / 1e6,
        (resident - bytes_per_token - kv_b) / 1e6);
  }
  if (report.contains("spec")) {
    const auto& s = report["spec"];
    std::printf("\nspeculative (%s, greedy): plain %.2f tok/s\n",
                Label("tg", a.n_gen, a.n_depth).c_str(), s["plain_tok_s"].get<double>());
    std::printf("  %-10s %9s %8s %10s %12s\n", "draft", "tok/s", "speedup", "accepted",
                "tok/forward");
    auto row = [](const std::string& name, const nlohmann::json& j) {
      std::printf("  %-10s %9.2f %7.2fx %9.1f%% %12.2f\n", name.c_str(), j["tok_s"].get<double>(),
                  j["speedup"].get<double>(), 100 * j["acceptance_rate"].get<double>(),
                  j["tokens_per_target_forward"].get<double>());
    };
    const nlohmann::json none = nlohmann::json::object();
    const nlohmann::json fixed = s.value("fixed", none), synthetic = s.value("synthetic", none);
    for (auto& [n, j] : fixed.items()) row("n=" + n, j);
    row("adaptive", s["adaptive"]);
    std::printf("  verify cost time(T)/time(1), T=1..16%s:",
                a.n_depth > 0 ? " (after a 64-token context)" : "");
    for (double c : s["verify_cost_vs_t1"]) std::printf(" %.2f", c);
    const auto& roof = s["verify_roofline"];
    std::printf("\n  its floor max(weight reads, matmul compute)/time(1):");
    for (double c : roof["floor_vs_t1"]) std::printf(" %.2f", c);
    std::printf(
        "\n    (weights read in %.1f ms at %.1f GB/s; %.2f G multiply-adds per row, in %.1f ms at "
        "T=1 and %.1f ms at T=8 at the kernels' rate with the weights in cache)\n",
        roof["weights_read_ms"].get<double>(), bandwidth / 1e9,
        roof["macs_per_row"].get<double>() / 1e9, roof["compute_ms_by_rows"][0].get<double>(),
        roof["compute_ms_by_rows"][7].get<double>());
    for (auto& [rate, j] : synthetic.items()) {
      std::printf("  synthetic acceptance %s: best fixed %.2fx, adaptive %.2fx (", rate.c_str(),
                  j["best_fixed"].get<double>(), j["adaptive"].get<double>());
      for (auto& [n, v] : j["fixed"].items())
        std::printf(" n=%s %.2fx", n.c_str(), v.get<double>());
      std::printf(" )\n");
    }
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand("bench", "Measure prompt/generation speed (and speculation)");
  auto a = std::make_shared<BenchArgs>();
  AddModelFlags(*sub, a->model);
  sub->add_option("-p,--n-prompt", a->n_prompt, "Prompt tokens for pp (0: skip)")
      ->capture_default_str();
  sub->add_option("-n,--n-gen", a->n_gen, "Generated tokens for tg (0: skip)")
      ->capture_default_str();
  sub->add_option("-d,--n-depth", a->n_depth,
                  "Tokens already in the context when pp, tg and the --spec runs are timed "
                  "(prefilled first, untimed)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("-r,--repetitions", a->repetitions, "Repetitions")->capture_default_str();
  sub->add_flag("--json", a->json, "Print one JSON object");
  sub->add_flag("--spec", a->spec, "Plain vs speculative decoding (needs -md)");
  sub->add_option("--draft-lengths", a->draft_lengths, "Fixed draft lengths to compare")
      ->capture_default_str();
  sub->add_option("--spec-prompt", a->spec_prompt,
                  "Text prompt of the --spec runs (default: 32 pseudo-random tokens)");
  sub->add_option("--synthetic-acceptance", a->synthetic,
                  "Per-position acceptance rates to simulate (comma list; empty: skip)")
      ->capture_default_str();
  sub->callback([&runner, a, sub] { runner = [a, sub] { return RunBench(*a, *sub); }; });
}

}  // namespace tandem::cli
