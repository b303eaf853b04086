"""Inference with the PyTorch pair, for the tests: greedy drafting after a prompt and greedy MTP
speculative decoding in the loop llama.cpp's draft-mtp and tandem run (docs/mtp.md
§ Drafting): draft min(draft_max, n_remaining - 1) tokens at a constant query position, verify
[last, d1..dk] with the target, accept while equal, append the target's token."""

import torch

EOG_TEXTS = ("<eos>", "<turn|>", "<|tool_response>")


class Step:
    """One draft step: logits [V] (centroid head when present, else dense), token, h_next [B],
    y [D], and margin = gap between the best and second-best logit."""

    def __init__(self, logits, h_next, y):
        top = torch.topk(logits, 2).values
        self.logits, self.h_next, self.y = logits, h_next, y
        self.token = int(logits.argmax())
        self.margin = float(top[0] - top[1])


def draft(target, assistant, kv, kv_len, token, h, pos, n, centroid=True):
    """n greedy draft steps extending `token` at query position pos over the target's K/V of
    positions 0..kv_len-1. kv: the target's {layer: (K, V)} for one sequence. -> [Step]."""
    c = target.config
    kv_swa = tuple(t[:, :kv_len] for t in kv[c.last_kv_layer(True)])
    kv_full = tuple(t[:, :kv_len] for t in kv[c.last_kv_layer(False)])
    dtype = h.dtype
    queries = assistant.queries(torch.tensor([[pos]]), torch.arange(kv_len)[None], dtype)
    steps = []
    with torch.no_grad():
        for _ in range(n):
            e = target.embed(torch.tensor([[token]]))
            y, h_next = assistant(e, h.view(1, 1, -1), kv_swa, kv_full, queries)
            head = assistant.centroid_logits if centroid and \
                assistant.config.use_ordered_embeddings else assistant.dense_logits
            s = Step(head(y)[0, 0], h_next[0, 0], y[0, 0])
            steps.append(s)
            token, h = s.token, s.h_next
    return steps


def margin(logits):
    top = torch.topk(logits, 2).values
    return float(top[0] - top[1])


def mtp_greedy(target, assistant, prompt, n, draft_max, eog_ids):
    """-> dict(tokens, drafted, accepted, rounds, acceptance_by_position, min_margin):
    min_margin is the smallest top-1/top-2 logit gap of any decision taken (target tokens and
    drafts), to spot near-ties."""
    with torch.no_grad():
        logits, hidden, kv = target(torch.tensor([prompt]))
    out = [int(logits[0, -1].argmax())]
    margins = [margin(logits[0, -1])]
    h = hidden[0, -1]
    drafted = accepted = 0
    rounds = []  # (drafted, accepted) per verification round
    while len(out) < n and out[-1] not in eog_ids:
        p = len(prompt) + len(out) - 1
        n_draft = max(0, min(draft_max, n - len(out) - 1))
        steps = draft(target, assistant, kv, p, out[-1], h, p, n_draft)
        drafts = [s.token for s in steps]
        margins += [s.margin for s in steps]
        with torch.no_grad():
            logits, hidden, kv = target(torch.tensor([prompt + out + drafts]))
        n_acc = 0
        for i in range(len(drafts) + 1):
            row = logits[0, p + i]
            tok = int(row.argmax())
            margins.append(margin(row))
            out.append(tok)
            match = i < len(drafts) and tok == drafts[i]
            n_acc += match  # tandem counts a matching draft even when it ends generation
            if tok in eog_ids or not match:
                break
        h = hidden[0, p + n_acc]
        if drafts:
            rounds.append((len(drafts), n_acc))
        drafted += len(drafts)
        accepted += n_acc
    return {"tokens": out[:n], "drafted": drafted, "accepted": accepted, "rounds": rounds,
            "acceptance_by_position": acceptance_by_position(rounds),
            "min_margin": min(margins)}


def acceptance_by_position(rounds):
    """Share of the drafts at each position i that were accepted (tandem's SpeculationStats)."""
    n = max((d for d, _ in rounds), default=0)
    drafted = [sum(1 for d, _ in rounds if d > i) for i in range(n)]
    accepted = [sum(1 for d, a in rounds if d > i and a > i) for i in range(n)]
    return [a / d if d else 0.0 for a, d in zip(accepted, drafted)]
