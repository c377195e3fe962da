#!/usr/bin/python3
"""Writes curves.csv, the tabulated learning curves of examples/sim_table.toml.

24 configs (lr x layers x optimizer) x 27 epochs, from a formula: accuracy
rises as ceiling * (1 - exp(-speed * epoch)); high learning rates learn fast
but plateau lower (the curves cross), Adam learns faster than SGD, deeper
models reach higher but take longer per epoch. A little noise (seeded, so
the file is the same each time) makes the curves jagged as real ones are.

    /usr/bin/python3 examples/curves/make_curves.py > examples/curves/curves.csv
"""
import math
import random

rng = random.Random(0)
print("# written by make_curves.py; see there")
print("lr,layers,optimizer,epoch,accuracy,loss,epoch_s")
for lr in (0.001, 0.003, 0.01, 0.03):
    for layers in (2, 4, 8):
        for optimizer in ("sgd", "adam"):
            u = math.log10(lr) + 2  # 0 at lr 0.01
            ceiling = 0.93 - 0.05 * u * u - 0.06 * (u > 0) * u + 0.01 * math.log2(layers) - 0.02
            speed = 0.15 * 10 ** (0.5 * u) * (1.5 if optimizer == "adam" else 1) / (1 + 0.05 * layers)
            epoch_s = 20 + 10 * layers
            for epoch in range(1, 28):
                accuracy = ceiling * (1 - math.exp(-speed * epoch)) + rng.gauss(0, 0.004)
                accuracy = min(max(accuracy, 0.0), 1.0)
                print(f"{lr},{layers},{optimizer},{epoch},{accuracy:.4f},{1 - accuracy:.4f},"
                      f"{epoch_s * rng.uniform(0.95, 1.05):.1f}")
