"""How methods join the core: plain tables in helpers.methods (nothing registers at import), run
extensions that say where they apply, and a toy fourth method added through the places
helpers/README.md's "Adding a paper" checklist names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from quotes import quote_problems
from torch import nn

from helpers import methods
from helpers.claims import collect_claims
from helpers.core import registry
from helpers.core.results_cache import config_hash, run_or_load
from helpers.core.runs import ExtensionLine, RunExtension, TrainConfig, build_run, default_param_groups, train_model
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.srelu.options import SReluOptions
from tools.run import all_experiments


def _mlp_config(**overrides) -> TrainConfig:
    base = TrainConfig(
        experiment="ext_test",
        dataset="adult",
        model="mlp",
        activation="gelu",
        n_train=64,
        n_val=32,
        epochs=1,
        batch_size=32,
        model_kwargs={"depth": 2, "width": 8},
    )
    return replace(base, **overrides)


def test_every_activation_of_the_table_builds_and_counts_as_a_site():
    for name in methods.ACTIVATIONS:
        module = registry.get_activation(name)
        assert isinstance(module, nn.Module)
        if name != "identity":  # nn.Identity is no site: replacing activations leaves it alone
            assert isinstance(module, registry.activation_types()), name
    assert set(methods.method_activations()) == {"lambda_gelu", "srelu", "srelu_paper", "smelu", "flexact"}


def test_importing_a_method_module_registers_nothing():
    """A fresh process that imports only the run path trains with every method's activation and
    options: the core reads helpers.methods' tables where it uses them, nothing is filled at import."""
    script = (
        "import sys\n"
        "from helpers.core.runs import TrainConfig\n"
        "from helpers.lambda_gelu.options import LambdaGeluOptions\n"
        "assert 'helpers.methods' not in sys.modules\n"
        "cfg = TrainConfig(experiment='x', dataset='adult', model='mlp', activation='lambda_gelu',\n"
        "                  options=(LambdaGeluOptions(hardness_lr_mult=2.0),))\n"
        "print(cfg.option(LambdaGeluOptions).hardness_lr_mult)\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=root, env=env)
    assert out.stdout.strip() == "2.0"


def test_experiment_names_are_unique_across_methods():
    names = [n for m in methods.METHODS for n in m.experiments]
    assert len(names) == len(set(names)) == len(all_experiments())


def test_unknown_activation_names_the_table():
    with pytest.raises(ValueError, match="helpers.methods.ACTIVATIONS"):
        registry.get_activation("not_an_activation")


def test_lambda_gelu_extension_leaves_a_gelu_run_alone(require_dataset):
    require_dataset("adult")
    parts = build_run(_mlp_config())
    names = [type(e).__name__ for e in parts["extensions"]]
    assert "LambdaGELURun" not in names and "FlexActRun" not in names and "SReLURun" not in names
    assert "ReluSubstitution" in names  # Table II's test is recorded for every GELU run
    (group,) = parts["optimizer"].param_groups
    assert [p.data_ptr() for p in group["params"]] == [p.data_ptr() for p in parts["model"].parameters()]


def test_lambda_gelu_extension_sets_hardness_groups_for_a_lambda_gelu_run(require_dataset):
    require_dataset("adult")
    parts = build_run(_mlp_config(activation="lambda_gelu", options=(LambdaGeluOptions(hardness_lr_mult=10.0),)))
    assert "LambdaGELURun" in [type(e).__name__ for e in parts["extensions"]]
    lrs = {g["name"]: g["lr"] for g in parts["optimizer"].param_groups}
    assert lrs["hardness"] == pytest.approx(10.0 * lrs["weights"])


class _Groups(RunExtension):
    def __init__(self, applies: bool) -> None:
        self._applies = applies

    def applies(self, model, cfg):
        return self._applies

    def param_groups(self, model, cfg):
        return default_param_groups(model, cfg.lr * 2, cfg.weight_decay)


def test_two_extensions_that_set_parameter_groups_are_an_error(require_dataset, monkeypatch):
    require_dataset("adult")
    line = ExtensionLine(_Groups(applies=True), activations=("lambda_gelu",))
    monkeypatch.setattr(methods, "RUN_EXTENSIONS", (*methods.RUN_EXTENSIONS, line))
    with pytest.raises(ValueError, match="several run extensions set the optimiser's parameter groups"):
        build_run(_mlp_config(activation="lambda_gelu"))


def test_an_extension_that_does_not_apply_is_not_consulted(require_dataset, monkeypatch):
    require_dataset("adult")
    line = ExtensionLine(_Groups(applies=False), activations=("gelu",))
    monkeypatch.setattr(methods, "RUN_EXTENSIONS", (*methods.RUN_EXTENSIONS, line))
    parts = build_run(_mlp_config())
    assert parts["optimizer"].param_groups[0]["lr"] == _mlp_config().lr


class _NeverAsked(RunExtension):
    def applies(self, model, cfg):
        raise AssertionError("applies was called for a run its line does not serve")


def test_a_line_that_does_not_serve_a_run_is_never_asked(require_dataset, monkeypatch):
    require_dataset("adult")
    lines = [
        ExtensionLine(_NeverAsked(), activations=("flexact",)),
        ExtensionLine(_NeverAsked(), options=SReluOptions),
        ExtensionLine(_NeverAsked(), flag="record_predictions", absent_record={"never": 0}),
    ]
    monkeypatch.setattr(methods, "RUN_EXTENSIONS", (*methods.RUN_EXTENSIONS, *lines))
    assert all(not line.serves(_mlp_config()) for line in lines)
    assert type(lines[0].extension) not in map(type, build_run(_mlp_config())["extensions"])
    assert ExtensionLine(_NeverAsked(), activations=("gelu",)).serves(
        _mlp_config(activation="relu", penultimate_activation="gelu")
    )
    assert ExtensionLine(_NeverAsked(), options=SReluOptions).serves(
        _mlp_config(activation="srelu", options=(SReluOptions(delta_anneal_target=0.01),))
    )


def test_a_gelu_run_enters_only_the_method_module_it_uses(require_dataset, script, tmp_path):
    """Issue 53 item 2: a run's method modules are those of its table lines that serve it; a GELU
    run uses only λ-GELU's Table II substitution test (and records an empty ``lambda_init``)."""
    require_dataset("adult")
    crossed = script("run_path").crossed_modules
    cfg, out = _mlp_config(), {}  # the config is built first: building one is not the run
    config_hash(cfg)  # a process's first hash builds each options class's default instance once
    modules = crossed(lambda: out.update(result=train_model(cfg, tmp_path)[2]))
    assert [m for m in modules if not m.startswith("core/")] == ["lambda_gelu/training"]
    assert out["result"]["lambda_init"] == []


# ----------------------------------------------------------------------------- a toy fourth method
#: The places helpers/README.md's "Adding a paper" names, for a toy source: the package's five
#: files here; the page, its toc line and its bibliography entry below; the Method line in the test.
TOY_PACKAGE = {
    "__init__.py": '"""A toy method: the softsign activation x / (1 + |x|) ({cite}`toy2026`)."""\n',
    "activation.py": """
        import torch
        from torch import nn


        def softsign(x: torch.Tensor) -> torch.Tensor:
            return x / (1 + x.abs())


        class Softsign(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return softsign(x)
        """,
    "paper.py": """
        from helpers.core.attribution import Quoted

        QUOTES = {
            "gain": Quoted("softsign with a gain of 2 trains to a finite loss", "Section 1", values=(2,)),
        }
        """,
    "protocol.py": """
        from dataclasses import dataclass
        from typing import ClassVar

        from helpers.core import validation as v
        from helpers.core.runs import RunExtension
        from helpers.core.options import MethodOptions
        from helpers.core.runs import TrainConfig


        @dataclass(frozen=True)
        class SoftsignOptions(MethodOptions):
            softsign_gain: float = 1.0

            RULES: ClassVar[dict[str, v.Rule]] = {"softsign_gain": v.number(0, low_open=True)}

            def check(self, config) -> None:
                if self.softsign_gain != 1.0 and config.activation != "softsign":
                    raise ValueError(f"softsign_gain applies to softsign runs, not {config.activation!r}")


        class SoftsignRun(RunExtension):
            def final_record(self, model, cfg, out, parts) -> dict:
                return {"softsign_gain": cfg.option(SoftsignOptions).softsign_gain}


        RUN_EXTENSION = SoftsignRun()


        def toy_configs(profile: str) -> list[TrainConfig]:
            return [TrainConfig(experiment="toy_softsign", dataset="adult", model="mlp", profile=profile,
                                activation="softsign", n_train=64, n_val=32, epochs=1, batch_size=32,
                                model_kwargs={"depth": 2, "width": 8},
                                options=(SoftsignOptions(softsign_gain=2.0),))]


        EXPERIMENTS = {"toy_softsign": toy_configs}
        """,
    "claims.py": """
        import math

        from helpers.core.claim import Claim
        from helpers.core.results_cache import config_hash, run_or_load
        from toy_method.paper import QUOTES
        from toy_method.protocol import toy_configs


        def claims() -> list[Claim]:
            (result,) = [run_or_load(c) for c in toy_configs("smoke")]
            loss = result["history"][-1]["train_loss"]
            return [Claim(claim="softsign trains an MLP to a finite loss", source="Toy paper, Section 1",
                          paper_value=QUOTES["gain"], our_value=f"{loss:.3f}", profile="smoke", scale="toy",
                          verdict="confirmed" if math.isfinite(loss) else "contradicted",
                          notebook="notebooks/99_toy", key="toy-softsign-finite-loss")]
        """,
}
TOY_SOURCE_TEXT = "A toy paper.\n\n1 Softsign\nWe find that softsign with a gain of 2 trains to a finite loss.\n"
TOY_PAGE = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# Softsign\n\nThe toy source {cite}`toy2026`."},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": 'from helpers.claims import claim\n\nclaim("toy-softsign-finite-loss").verdict',
        },
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}
TOY_BIB = "@article{toy2026,\n  title = {A toy paper},\n  author = {Toy, T.},\n  year = {2026},\n}\n"


def _toy_book(root: Path, check_toc, *, in_toc: bool) -> list[str]:
    """A book root holding the toy's page, its toc line (or not) and its bibliography entry; the
    toc check's problems with it."""
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "intro.md").write_text("# Toy book\n")
    (root / "notebooks" / "99_toy.ipynb").write_text(json.dumps(TOY_PAGE))
    (root / "book" / "references.bib").write_text(TOY_BIB)
    chapter = "      - file: notebooks/99_toy\n" if in_toc else ""
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nparts:\n  - caption: Toy\n    chapters:\n{chapter}")
    if not in_toc:
        (root / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    return check_toc.problems(root / "_toc.yml", root)


def test_a_toy_fourth_method_reaches_the_report(tmp_path, monkeypatch, require_dataset, script):
    require_dataset("adult")
    package = tmp_path / "toy_method"
    package.mkdir()
    for name, text in TOY_PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    from toy_method import activation, claims, paper, protocol

    # The checklist's lines in helpers/methods.py (its Method and one line of each table), made
    # here on copies of the tables.
    toy = methods.Method("toy_method", "Toy", claims.claims, experiments=protocol.EXPERIMENTS, source_text="toy.txt")
    monkeypatch.setattr(methods, "METHODS", methods.METHODS + (toy,))
    monkeypatch.setattr(methods, "CLAIM_SOURCES", methods.CLAIM_SOURCES + (toy,))
    monkeypatch.setattr(methods, "ACTIVATIONS", {**methods.ACTIVATIONS, "softsign": activation.Softsign})
    monkeypatch.setattr(methods, "ACTIVATION_TYPES", (*methods.ACTIVATION_TYPES, activation.Softsign))
    monkeypatch.setattr(methods, "DISPLAY_NAMES", {**methods.DISPLAY_NAMES, "softsign": "Softsign"})
    monkeypatch.setattr(methods, "OPTIONS", (*methods.OPTIONS, protocol.SoftsignOptions))
    toy_line = ExtensionLine(protocol.RUN_EXTENSION, activations=("softsign",))
    monkeypatch.setattr(methods, "RUN_EXTENSIONS", (*methods.RUN_EXTENSIONS, toy_line))

    x = torch.linspace(-3, 3, 7)
    torch.testing.assert_close(registry.get_activation("softsign")(x), x / (1 + x.abs()))
    assert "toy_softsign" in all_experiments()
    assert registry.display_name("softsign") == "Softsign"
    (config,) = protocol.toy_configs("smoke")
    result = run_or_load(config)
    assert result["status"] == "ok" and result["softsign_gain"] == 2.0  # the knob reached the run
    # stored flat under its own name, and routed back into the toy's options object
    assert result["config"]["softsign_gain"] == 2.0
    fields = {k: v for k, v in result["config"].items() if k != "config_class"}
    assert TrainConfig.from_dict(fields) == config
    with pytest.raises(ValueError, match="softsign_gain applies to softsign runs"):
        replace(config, activation="gelu")
    # collect_claims walks CLAIM_SOURCES; the toy's rows are computed alone here (the book's own take
    # a minute), and test_report_store shows the stored report follows what CLAIM_SOURCES holds
    assert methods.CLAIM_SOURCES[-1] is toy
    monkeypatch.setattr(methods, "CLAIM_SOURCES", (toy,))
    found = [c for c in collect_claims() if c.source.startswith("Toy paper")]
    assert len(found) == 1 and found[0].verdict == "confirmed" and found[0].paper_kind == "quoted"
    # the paper's excerpts pass the attribution checks the book's four sources pass, and fail them
    # where a number or an excerpt is not the source's
    assert toy.paper == "helpers.toy_method.paper" and toy.source_text == "toy.txt"  # as for the book's own
    assert quote_problems(paper.QUOTES, TOY_SOURCE_TEXT) == []
    wrong = {"gain": replace(paper.QUOTES["gain"], values=(3,))}
    assert len(quote_problems(wrong, TOY_SOURCE_TEXT.replace("gain of 2", "gain of two"))) == 2
    # the page is built only with its toc line, and cites the bibliography's entry
    assert _toy_book(tmp_path / "book_in", script("check_toc"), in_toc=True) == []
    (problem,) = _toy_book(tmp_path / "book_out", script("check_toc"), in_toc=False)
    assert "notebook not built" in problem and "notebooks/99_toy" in problem
    assert "{cite}`toy2026`" in TOY_PAGE["cells"][0]["source"] and "@article{toy2026," in TOY_BIB
    for name in [m for m in sys.modules if m == "toy_method" or m.startswith("toy_method.")]:
        sys.modules.pop(name)


def test_a_line_never_serves_runs_that_carry_options_it_is_excluded_by():
    from dataclasses import replace

    from helpers.core.runs import ExtensionLine, RunExtension
    from helpers.srelu.dpo_experiment import DPOOptions, dpo_configs

    line = ExtensionLine(RunExtension(), activations=("gelu",), excluded_by=(DPOOptions,))
    gelu_dpo = dpo_configs("smoke")[0]
    assert gelu_dpo.activation == "gelu" and not line.serves(gelu_dpo)
    assert line.serves(replace(gelu_dpo, options=()))  # the same pre-training without the DPO grid
