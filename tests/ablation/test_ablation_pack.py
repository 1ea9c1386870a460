"""An ablation grid's rows packed one by one (`titjudge pack GRID/rows/<row>`): each row's
every number re-derived from its pack alone, and equal to the grid's own record of it."""

from __future__ import annotations

import json

from titjudge.cli import main


def test_each_row_of_a_grid_packs_and_reproduces(plain_grid, tmp_path, capsys, monkeypatch):
    rows = sorted(p for p in (plain_grid.out / "rows").iterdir() if p.is_dir())
    assert len(rows) == 2
    grid = json.loads((plain_grid.out / "ablation.json").read_text())
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for row in rows:
        pack = tmp_path / f"{row.name}.tjpack"
        assert main(["pack", str(row), "-o", str(pack)]) == 0
        assert main(["reproduce", str(pack), "--out", str(tmp_path / row.name)]) == 0
        assert "every number matches" in capsys.readouterr().out
        again = json.loads((tmp_path / row.name / "run" / "metrics.json").read_text())
        recorded = next(r for r in grid["rows"] if r["name"] == row.name)["metrics"]
        for name, variant in recorded["variants"].items():  # the grid's cells, re-derived
            assert again["variants"][name]["pairwise_accuracy"] == variant["pairwise_accuracy"]


def test_a_whole_grid_packs_and_its_tables_reproduce(plain_grid, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pack = tmp_path / "grid.tjpack"
    assert main(["pack", str(plain_grid.out), "-o", str(pack)]) == 0
    assert main(["reproduce", str(pack), "--out", str(tmp_path / "again")]) == 0, (
        capsys.readouterr().out
    )
    said = capsys.readouterr().out
    assert "ablation.json and the tables" in said
    for name in ("table4.md", "table2.csv", "leaderboard.tex"):  # byte for byte
        assert (tmp_path / "again" / "grid" / name).read_bytes() == (
            plain_grid.out / name
        ).read_bytes()
    # one changed cell in the pack's table is one line
    import zipfile

    changed = tmp_path / "changed.tjpack"
    with zipfile.ZipFile(pack) as old, zipfile.ZipFile(changed, "w") as new:
        manifest = json.loads(old.read("manifest.json"))
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "grid/table4.md":
                data = data.replace(b"|", b"!", 1)
                from titjudge.study.pack import sha256_of

                manifest["files"][info.filename] = {"sha256": sha256_of(data), "bytes": len(data)}
            if info.filename != "manifest.json":
                new.writestr(info.filename, data)
        new.writestr("manifest.json", json.dumps(manifest))
    assert main(["reproduce", str(changed), "--out", str(tmp_path / "c")]) == 1
    assert "table4.md: differs from the pack's" in capsys.readouterr().out
    assert main(["reproduce", str(pack), "--out", str(tmp_path / "p"), "--against", "paper"]) == 2


def test_a_jury_is_a_column_of_table4_like_any_judge(synthetic, tmp_path, monkeypatch):
    """`kind: jury` as a grid column: each row's jury is fitted on that row's judges and
    scored on its held-out pairs; Table 4 shows it beside its members, from each row's record."""
    import csv

    from ablation.conftest import GridResponder, stored_descriptions  # not `conftest`: ambiguous
    from ablation_grids import grid_config, run_grid
    from doubles.server import FakeOpenAIServer

    bench = synthetic(4, 4, seed=5)  # 4 prompts x 6 pairs: enough to fit on 3 of 4 folds
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    jury = {"name": "jury", "kind": "jury", "label": "Jury", "members": ["lexical", "tit_llm"]}
    with FakeOpenAIServer(
        responder=GridResponder(stored_descriptions(bench)),
        models=("vlm-sharp", "vlm-blurry", "judge-llm", "judge-flaky"),
    ) as server:
        raw = grid_config(bench, server.url, tmp_path, extra_columns=[jury])
        run_grid(raw, tmp_path / "out")
    with (tmp_path / "out" / "table4.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    at = rows[0].index("Jury")
    grid = json.loads((tmp_path / "out" / "ablation.json").read_text())
    for row in grid["rows"]:
        shown = next(r for r in rows[1:] if r[0] == row["label"])
        accuracy = row["metrics"]["variants"]["jury"]["pairwise_accuracy"]
        assert accuracy is not None and shown[at] == f"{100 * accuracy:.4f}"  # the record's
        n_pairs = row["metrics"]["variants"]["jury"]["n_pairs"]
        assert shown[rows[0].index("pairs: Jury")] == str(n_pairs)  # every held-out pair
        fit = json.loads((tmp_path / "out" / "rows" / row["name"] / "jury_jury.json").read_text())
        assert fit["fitted"] is True and len(fit["folds"]) == 4
