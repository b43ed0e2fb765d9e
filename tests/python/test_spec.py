"""The netem SPEC has one parser, lossy-emu's (lib/emu/emu_spec.c). The testbed's loss
models read it through `rocewire spec` instead of parsing the grammar again."""
import json
import subprocess

import pytest

from rwtest import rocewire_path
from rocewan.testbed import model, spec

SPECS = ["", "loss 0.1%", "loss random 1% 25%", "loss gemodel 0.02% 20%", "loss gemodel 1% 30% 70% 0.1%",
         "loss state 1% 20% 5% 30% 0.5%", "delay 10ms 1ms 25% distribution normal loss 0.5% rate 1gbit",
         "limit 5000 limit-bytes 2000000b rate 500mbit pfc xoff 800000b xon 600000b prio 3",
         "delay 20ms limit 5000 ctrl-delay loss gemodel 0.01%",
         "delay 5ms drop-mad cm-req 1 drop-mad cm-rep 1,3 drop-nth 50"]


def run(text):
    return subprocess.run([rocewire_path(), "spec", "--", text], capture_output=True, text=True)


@pytest.mark.parametrize("text", SPECS)
def test_effective_spec_is_a_fixed_point(text):
    """C format(parse(x)) parses back to itself: the JSON Python reads is the emulator's."""
    r = run(text)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    again = run(doc["spec"])
    assert again.returncode == 0 and json.loads(again.stdout) == doc


def test_drop_mad_rules_are_printed_back_in_order():
    r = run("drop-mad cm-rep 1,3 delay 5ms drop-psn 17:5 drop-mad cm-sidr-req 2")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["spec"].endswith(
        "drop-mad cm-rep 1,3 drop-psn 0x11:0x5:1 drop-mad cm-sidr-req 2")
    bad = run("drop-mad cm-req 3,1")
    assert bad.returncode == 2 and "must ascend" in bad.stderr


def test_netem_defaults_come_from_the_c_parser():
    lp = spec.loss_params("gemodel 0.02% 20%")
    assert lp == {"model": "gemodel", "p": 0.0002, "r": 0.2, "1-h": 1, "1-k": 0}
    assert spec.loss_params("gemodel 1%")["r"] == pytest.approx(0.99)  # netem: r = 1 - p
    assert spec.loss_params("0.1%") == {"model": "random", "p": 0.001, "corr": 0}


def test_ge_params_arithmetic_on_the_parsed_model():
    p, r = 0.0002, 0.2
    loss, events = model.ge_params("gemodel 0.02% 20%")
    assert loss == p / (p + r)  # 1-h = 100 %, 1-k = 0 %: every bad-state packet is lost
    assert events == (1 - p / (p + r)) * p  # a loss whose predecessor was kept
    assert model.ge_params("random 1% 25%") == (0.01, 0.01 * 0.99)
    assert model.ge_params("") == (0.0, 0.0)


@pytest.mark.parametrize("bad,msg", [("gemodel 120%", '"120%" is not a probability'),
                                     ("4096", '"4096" is not a probability'),
                                     ("gemodel", "gemodel")])
def test_a_spec_lossy_emu_refuses_is_refused_with_its_message(bad, msg):
    r = run(f"loss {bad}")
    assert r.returncode == 2 and r.stdout == "" and msg in r.stderr
    with pytest.raises(ValueError, match=msg):
        model.ge_params(bad)


def test_four_state_model_is_parsed_but_not_in_the_formula():
    assert spec.loss_params("state 1%")["model"] == "state"
    with pytest.raises(ValueError, match="state loss model is not supported"):
        model.ge_params("state 1%")
