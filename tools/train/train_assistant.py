#!/usr/bin/python3
"""Step 4b: distil the MTP assistant from the frozen target.

  train_assistant.py --work DIR [--steps auto|N] [--max-minutes 30] [--threads 2] [--smoke]

Per batch the frozen target (DIR/target.pt) runs over the windows and gives its post-norm
hidden states, the K/V of the layers the assistant reads and its next-token distributions.
Every position p >= 1 is a draft row: step 0 feeds the token at p, the target's hidden of row
p-1 and the query position p over the target's keys < p (the cache before p); step k feeds the
token at p+k and the previous step's post_projection output at the same position p (constant
query position, docs/mtp.md § Positions). Step k is trained to match the target's
distribution of row p+k (soft cross-entropy), i.e. to predict the target's next tokens.

Phase 1 (1 - --centroid-share of the steps) trains the whole assistant with its dense tied
head. Phase 2 clusters the embedding rows (balanced spherical k-means, centroids.py) into the
token ordering and trains only the cluster scorer on the target's probability mass per cluster.
Writes DIR/assistant.pt, DIR/assistant_log.csv and DIR/assistant_summary.json (held-out
agreement with the target's argmax per draft step, dense and centroid head).
"""

import argparse
import dataclasses
import os
import sys

sys.dont_write_bytecode = True

import torch  # noqa: E402

import centroids as centroids_lib  # noqa: E402
import model as model_lib  # noqa: E402
import train_common as tc  # noqa: E402

SMOKE_CONFIG = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64,
                    num_centroids=16, centroid_intermediate_top_k=4)


class Drafter:
    """Runs the frozen target on windows and unrolls the assistant over every draft row."""

    def __init__(self, target, assistant, draft_steps):
        self.target, self.assistant, self.k = target, assistant, draft_steps
        c = target.config
        self.l_swa, self.l_full = c.last_kv_layer(True), c.last_kv_layer(False)

    def teacher(self, w):
        """w [N, T + 1] -> (tokens [N, T], target probs [N, T, V], hidden, kv)."""
        x = w[:, :-1]
        with torch.no_grad():
            logits, hidden, kv = self.target(x)
        return x, torch.softmax(logits, -1), hidden, kv

    def unroll(self, x, hidden, kv):
        """Yields (k, y [N, R, D]) for draft steps k = 0..K-1 over rows p = 1..T-K."""
        t, k_steps = x.shape[1], self.k
        r = t - k_steps
        q_pos = torch.arange(1, r + 1)[None]
        queries = self.assistant.queries(q_pos, torch.arange(t)[None], hidden.dtype)
        h = hidden[:, :r]
        for k in range(k_steps):
            e = self.target.embed(x[:, 1 + k:1 + k + r]).detach()
            y, h = self.assistant(e, h, kv[self.l_swa], kv[self.l_full], queries)
            yield k, y

    def labels(self, probs, k):
        """Target distribution the draft step k of rows 1..T-K must match: rows 1+k.."""
        r = probs.shape[1] - self.k
        return probs[:, 1 + k:1 + k + r]


def soft_ce(logits, probs):
    return -(probs * torch.log_softmax(logits, -1)).sum(-1).mean()


def cluster_mass(probs, ordering, n_clusters):
    """probs [..., V] -> probability mass per cluster [..., C]."""
    return probs[..., ordering].view(*probs.shape[:-1], n_clusters, -1).sum(-1)


def evaluate(drafter, windows, batch):
    """Held-out agreement of each draft step's argmax with the target's, dense and centroid
    heads, and the share of rows whose target argmax lies in the kept clusters."""
    a = drafter.assistant
    k = drafter.k
    dense, cent, recall, n = [0] * k, [0] * k, [0] * k, 0
    a.eval()
    with torch.no_grad():
        for i in range(0, len(windows), batch):
            x, probs, hidden, kv = drafter.teacher(windows[i:i + batch])
            for step, y in drafter.unroll(x, hidden, kv):
                want = drafter.labels(probs, step).argmax(-1)
                dense[step] += int((a.dense_logits(y).argmax(-1) == want).sum())
                if a.config.use_ordered_embeddings:
                    cl = a.centroid_logits(y)
                    cent[step] += int((cl.argmax(-1) == want).sum())
                    recall[step] += int(torch.isfinite(cl.gather(-1, want[..., None])).sum())
                if step == 0:
                    n += want.numel()
    a.train()
    return ([d / n for d in dense], [c / n for c in cent], [r / n for r in recall])


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", required=True, help="work directory with target.pt")
    p.add_argument("--steps", default="auto", help="number of steps, or auto (fit --max-minutes)")
    p.add_argument("--max-minutes", type=float, default=30.0)
    p.add_argument("--centroid-share", type=float, default=0.15,
                   help="share of the steps that train the cluster scorer")
    p.add_argument("--draft-steps", type=int, default=3, help="draft steps unrolled per row")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--eval-windows", type=int, default=32)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--smoke", action="store_true", help="tiny config, 20 steps")
    args = p.parse_args(argv)
    if args.smoke:
        args.steps, args.batch, args.seq_len, args.warmup, args.eval_windows = "20", 4, 64, 5, 4
    return args


def main(argv=None):
    args = parse_args(argv)
    tc.setup_torch(args.seed, args.threads)
    target = tc.load_target(os.path.join(args.work, "target.pt"))
    target.eval()
    for prm in target.parameters():
        prm.requires_grad_(False)
    tok_dir = os.path.join(args.work, "tokenizer")
    corpus_dir = os.path.join(args.work, "corpus")
    train = tc.token_stream(corpus_dir, tok_dir, "train", args.work)
    held = tc.token_stream(corpus_dir, tok_dir, "heldout", args.work)
    cfg = model_lib.AssistantConfig(**(SMOKE_CONFIG if args.smoke else {}))
    if target.config.vocab_size % cfg.num_centroids:
        raise SystemExit(f"train_assistant.py: error: {cfg.num_centroids} centroids do not divide "
                         f"the vocabulary of {target.config.vocab_size} tokens")
    a = model_lib.Gemma4AssistantForCausalLM(cfg, target.config)
    print(f"assistant: {model_lib.count_parameters(a) / 1e6:.2f}M parameters", flush=True)
    drafter = Drafter(target, a, args.draft_steps)
    body = [p for n, p in a.named_parameters() if not n.startswith("masked_embedding")]
    opt = torch.optim.AdamW(body, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    batches = tc.Batches(train, args.batch, args.seq_len, args.seed)
    windows = tc.eval_windows(held, args.seq_len, args.eval_windows)
    budget = tc.StepBudget(args.steps, args.max_minutes)
    fields = ["step", "elapsed_s", "phase", "lr", "loss"] + \
        [f"loss_step{k}" for k in range(args.draft_steps)] + ["agree_step0"]
    log = tc.CsvLog(os.path.join(args.work, "assistant_log.csv"), fields)
    step, phase, phase2_start = 0, 1, None
    while True:
        late = budget.elapsed() > budget.max_seconds * (1 - args.centroid_share)
        if phase == 1 and (step >= int(budget.total * (1 - args.centroid_share)) or late):
            phase, phase2_start = 2, step
            rows = a.model.embed_tokens.weight.detach().numpy()
            cent, ordering = centroids_lib.balanced_kmeans(rows, cfg.num_centroids, seed=args.seed)
            a.masked_embedding.token_ordering.copy_(torch.from_numpy(ordering))
            with torch.no_grad():
                a.masked_embedding.centroids.weight.copy_(torch.from_numpy(cent).float())
            for prm in body:
                prm.requires_grad_(False)
            opt = torch.optim.AdamW(a.masked_embedding.parameters(), lr=args.lr,
                                    betas=(0.9, 0.95), weight_decay=0.0)
            print(f"step {step}: clustered the embedding rows, training the scorer", flush=True)
        start = 0 if phase == 1 else phase2_start
        lr = tc.lr_at(step - start, budget.total - start, args.lr, args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        x, probs, hidden, kv = drafter.teacher(batches.next())
        losses, agree = [], 0.0
        for k, y in drafter.unroll(x, hidden, kv):
            want = drafter.labels(probs, k)
            if phase == 1:
                logits = a.dense_logits(y)
                losses.append(soft_ce(logits, want))
                if k == 0:
                    agree = float((logits.argmax(-1) == want.argmax(-1)).float().mean())
            else:
                scores = a.masked_embedding.centroids(y)
                mass = cluster_mass(want, a.masked_embedding.token_ordering, cfg.num_centroids)
                losses.append(soft_ce(scores, mass))
                if k == 0:
                    best = mass.argmax(-1)
                    agree = float((scores.argmax(-1) == best).float().mean())
        loss = sum(losses) / len(losses)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
        opt.step()
        go_on = budget.after_step(step)
        row = dict(step=step + 1, elapsed_s=budget.elapsed(), phase=phase, lr=lr,
                   loss=float(loss), agree_step0=agree)
        row.update({f"loss_step{k}": float(v) for k, v in enumerate(losses)})
        log.write(**row)
        if (step + 1) % 50 == 0 or not go_on:
            print(f"step {step + 1}/{budget.total} phase {phase}: loss {float(loss):.4f}, "
                  f"step-0 agreement {agree:.3f}, {budget.elapsed() / 60:.1f} min", flush=True)
        step += 1
        if not go_on:
            break
    log.close()
    if phase == 1:
        raise SystemExit("train_assistant.py: error: the run ended before the centroid phase")
    dense, cent, recall = evaluate(drafter, windows, args.batch)
    tc.save_checkpoint(os.path.join(args.work, "assistant.pt"), a, dataclasses.asdict(cfg))
    tc.write_json(os.path.join(args.work, "assistant_summary.json"), {
        "parameters": model_lib.count_parameters(a), "steps": step,
        "centroid_phase_from_step": phase2_start, "minutes": budget.elapsed() / 60,
        "heldout_agreement_dense": dense, "heldout_agreement_centroid": cent,
        "heldout_cluster_recall": recall, "seed": args.seed, "threads": args.threads,
        "config": dataclasses.asdict(cfg)})
    print("assistant: held-out agreement with the target per draft step: dense " +
          " ".join(f"{d:.3f}" for d in dense) + ", centroid " +
          " ".join(f"{c:.3f}" for c in cent), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
