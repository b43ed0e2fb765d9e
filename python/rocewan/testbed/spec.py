"""lossy-emu's SPEC (tc-netem's grammar) read by the one parser there is: lossy-emu's
own, lib/emu/emu_spec.c, through `rocewire spec` (tools/rocewire). Python never parses
the grammar itself, so the testbed's models see exactly the parameters the emulator
runs with, netem's defaults included."""
import functools
import json
import os
import subprocess

from .topo import BUILD, TopoError


def rocewire():
    path = os.path.join(BUILD, "tools", "rocewire", "rocewire")
    if not os.access(path, os.X_OK):
        raise TopoError(f"{path} is not built (run `make build`, or set ROCEWAN_BUILD)")
    return path


@functools.lru_cache(maxsize=256)
def parse(spec):
    """SPEC -> {"spec": the effective SPEC, "loss": {"model": none|random|gemodel|state,
    and its parameters as probabilities}}. A SPEC lossy-emu refuses raises ValueError
    with lossy-emu's own one-line message."""
    r = subprocess.run([rocewire(), "spec", "--", spec], capture_output=True, text=True)
    if r.returncode:
        raise ValueError(r.stderr.strip().removeprefix("rocewire: spec: ") or
                         f"rocewire spec exited {r.returncode}")
    return json.loads(r.stdout)


def loss_params(loss_words):
    """The loss model of a `loss ...` fragment (the words after 'loss', as in a config's
    link.loss), parsed by lossy-emu's parser."""
    return parse(f"loss {loss_words}")["loss"]
