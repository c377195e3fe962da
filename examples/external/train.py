"""A trainable for `tunerun` in plain Python (standard library only).

Fits y = 2x - 1 with SGD on noisy samples and reports the validation loss
after every epoch through tunerun's line protocol (train/external_command.h):

    @tunerun {"val_loss": 0.12, "checkpoint": "some/dir"}

It gets its hyperparameters as arguments (the sweep's command fills in
{lr}, {momentum}, {epochs}); the whole config is also in TUNERUN_CONFIG.
When the trial resumes (after a pause or a failure), TUNERUN_CHECKPOINT
names the directory of its last checkpoint. Run it alone to try it:

    python3 train.py --lr 0.05 --momentum 0.9 --epochs 5
"""
import argparse
import json
import os
import random
import tempfile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    rng = random.Random(0)
    data = [(x, 2 * x - 1 + rng.gauss(0, 0.1)) for x in (rng.uniform(-1, 1) for _ in range(256))]
    train, val = data[:200], data[200:]

    w, b, vw, vb, start = 0.0, 0.0, 0.0, 0.0, 1
    resume = os.environ.get("TUNERUN_CHECKPOINT")
    if resume:  # pick up where the last checkpoint left off
        with open(os.path.join(resume, "model.json")) as f:
            state = json.load(f)
        w, b, vw, vb, start = state["w"], state["b"], state["vw"], state["vb"], state["epoch"] + 1
        print(f"resuming from {resume} at epoch {start}")

    # Checkpoints go to fresh directories in the trial's own directory;
    # tunerun moves their files into trials/<id>/checkpoint_<iteration>/.
    trial_dir = os.environ.get("TUNERUN_TRIAL_DIR")  # unset when run by hand
    for epoch in range(start, args.epochs + 1):
        rng.shuffle(train)
        for x, y in train:
            err = w * x + b - y
            vw = args.momentum * vw - args.lr * err * x
            vb = args.momentum * vb - args.lr * err
            w, b = w + vw, b + vb
        val_loss = sum((w * x + b - y) ** 2 for x, y in val) / len(val)
        report = {"val_loss": val_loss, "w": w, "b": b}
        if trial_dir:
            report["checkpoint"] = tempfile.mkdtemp(prefix="ckpt_", dir=trial_dir)
            with open(os.path.join(report["checkpoint"], "model.json"), "w") as f:
                json.dump({"w": w, "b": b, "vw": vw, "vb": vb, "epoch": epoch}, f)
        print(f"epoch {epoch}: w={w:.4f} b={b:.4f}")  # a plain line: goes to the rank log
        print("@tunerun " + json.dumps(report))


if __name__ == "__main__":
    main()
