#!/usr/bin/python3
"""Step 4a: train the Gemma 4 target on the corpus (next-token cross-entropy).

  train_target.py --work DIR [--steps auto|N] [--max-minutes 45] [--threads 2] [--smoke]

Reads DIR/corpus (corpus.py) and DIR/tokenizer (tokenizer.py); writes DIR/target.pt (weights +
config), DIR/target_log.csv (loss per step, held-out loss at every --eval-every steps and at the
end) and DIR/target_summary.json. The vocabulary size is the tokenizer's. Seeded: the same
--seed, --steps and --threads give the same weights. --smoke: a tiny config, 20 steps.
"""

import argparse
import dataclasses
import os
import sys

sys.dont_write_bytecode = True

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import model as model_lib  # noqa: E402
import train_common as tc  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402

# The smoke config keeps every feature (sliding + full, two head dims, KV sharing, PLE,
# double-wide MLP) at toy sizes.
SMOKE_CONFIG = dict(hidden_size=64, num_attention_heads=2, head_dim=16, global_head_dim=32,
                    intermediate_size=128, hidden_size_per_layer_input=32, sliding_window=16)


def evaluate(m, windows, batch):
    """Mean next-token loss (nats/token) over windows [n, T + 1]."""
    m.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(windows), batch):
            w = windows[i:i + batch]
            logits, _, _ = m(w[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1),
                                   reduction="sum")
            total += float(loss)
            count += w[:, 1:].numel()
    m.train()
    return total / count


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", required=True, help="work directory (corpus/, tokenizer/ inside)")
    p.add_argument("--steps", default="auto", help="number of steps, or auto (fit --max-minutes)")
    p.add_argument("--max-minutes", type=float, default=45.0)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--eval-windows", type=int, default=48)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--smoke", action="store_true", help="tiny config, 20 steps")
    args = p.parse_args(argv)
    if args.smoke:
        args.steps, args.batch, args.seq_len, args.warmup = "20", 4, 64, 5
        args.eval_every, args.eval_windows = 10, 4
    return args


def main(argv=None):
    args = parse_args(argv)
    tc.setup_torch(args.seed, args.threads)
    tok_dir = os.path.join(args.work, "tokenizer")
    corpus_dir = os.path.join(args.work, "corpus")
    n_vocab = len(Tokenizer.load(tok_dir))
    train = tc.token_stream(corpus_dir, tok_dir, "train", args.work)
    held = tc.token_stream(corpus_dir, tok_dir, "heldout", args.work)
    cfg = model_lib.TargetConfig(vocab_size=n_vocab, **(SMOKE_CONFIG if args.smoke else {}))
    m = model_lib.Gemma4ForCausalLM(cfg)
    print(f"target: {model_lib.count_parameters(m) / 1e6:.2f}M parameters, "
          f"{len(train) / 1e6:.2f}M training tokens", flush=True)

    decay = [p for p in m.parameters() if p.dim() >= 2]
    other = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    batches = tc.Batches(train, args.batch, args.seq_len, args.seed)
    windows = tc.eval_windows(held, args.seq_len, args.eval_windows)
    budget = tc.StepBudget(args.steps, args.max_minutes)
    log = tc.CsvLog(os.path.join(args.work, "target_log.csv"),
                    ["step", "elapsed_s", "lr", "loss", "heldout_loss"])
    step, held_loss = 0, None
    while True:
        lr = tc.lr_at(step, budget.total, args.lr, args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        w = batches.next()
        logits, _, _ = m(w[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, n_vocab), w[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        go_on = budget.after_step(step)
        row = dict(step=step + 1, elapsed_s=budget.elapsed(), lr=lr, loss=float(loss),
                   heldout_loss="")
        if (step + 1) % args.eval_every == 0 or not go_on:
            held_loss = evaluate(m, windows, args.batch)
            row["heldout_loss"] = held_loss
            print(f"step {step + 1}/{budget.total}: loss {float(loss):.4f}, held-out "
                  f"{held_loss:.4f}, {budget.elapsed() / 60:.1f} min", flush=True)
        log.write(**row)
        step += 1
        if not go_on:
            break
    log.close()
    tc.save_checkpoint(os.path.join(args.work, "target.pt"), m, dataclasses.asdict(cfg))
    tc.write_json(os.path.join(args.work, "target_summary.json"), {
        "parameters": model_lib.count_parameters(m), "steps": step,
        "tokens_seen": step * args.batch * args.seq_len, "heldout_loss": held_loss,
        "heldout_tokens": int(windows[:, 1:].numel()), "minutes": budget.elapsed() / 60,
        "seed": args.seed, "threads": args.threads, "batch": args.batch,
        "seq_len": args.seq_len, "lr": args.lr, "config": dataclasses.asdict(cfg)})
    print(f"target: {step} steps, held-out loss {held_loss:.4f} -> "
          f"{os.path.join(args.work, 'target.pt')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
