#!/usr/bin/env python3
"""A CalculiX input deck for 454-calculix: a steel cantilever meshed with
8-node bricks (C3D8), clamped at one end and loaded at the other past its
yield stress, solved as a nonlinear static step (large deformations,
elastic-plastic steel), so the solver runs several increments of Newton
iterations, each assembling and factoring the stiffness matrix.

usage: calculix-beam.py OUT NX NY NZ LOAD

NX x NY x NZ bricks over a 10 x 1 x 1 beam (mm); LOAD is the tip force (N),
spread over the tip's nodes. The elastic estimate of the root's stress is
60 LOAD (MPa), against a yield stress of 235.
"""
import sys


def main() -> int:
    out, nx, ny, nz, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    size = (10.0, 1.0, 1.0)

    def node(i: int, j: int, k: int) -> int:
        return 1 + i + (nx + 1) * (j + (ny + 1) * k)

    deck = ["*HEADING", "spmsim 454-calculix: elastic-plastic cantilever", "*NODE"]
    for k in range(nz + 1):
        for j in range(ny + 1):
            for i in range(nx + 1):
                deck.append(f"{node(i, j, k)}, {size[0] * i / nx:.6f}, {size[1] * j / ny:.6f}, {size[2] * k / nz:.6f}")
    deck.append("*ELEMENT, TYPE=C3D8, ELSET=EALL")
    number = 1
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                corners = [node(i, j, k), node(i + 1, j, k), node(i + 1, j + 1, k), node(i, j + 1, k),
                           node(i, j, k + 1), node(i + 1, j, k + 1), node(i + 1, j + 1, k + 1), node(i, j + 1, k + 1)]
                deck.append(f"{number}, " + ", ".join(str(c) for c in corners))
                number += 1
    root = [node(0, j, k) for k in range(nz + 1) for j in range(ny + 1)]
    tip = [node(nx, j, k) for k in range(nz + 1) for j in range(ny + 1)]
    deck += ["*NSET, NSET=ROOT"] + [str(n) for n in root]
    deck += ["*BOUNDARY", "ROOT, 1, 3"]
    deck += ["*MATERIAL, NAME=STEEL", "*ELASTIC", "210000., 0.3", "*PLASTIC", "235., 0.", "400., 0.2"]
    deck += ["*SOLID SECTION, ELSET=EALL, MATERIAL=STEEL"]
    deck += ["*STEP, NLGEOM, INC=100", "*STATIC", "0.1, 1.0", "*CLOAD"]
    deck += [f"{n}, 3, {-load / len(tip):.6f}" for n in tip]
    deck += ["*NODE FILE", "U", "*END STEP"]
    with open(out, "w") as f:
        f.write("\n".join(deck) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
