"""Tests of examples/fill.py against the committed vectors (run: python3 -m unittest discover -s examples).

For each committed graph-vector file, every record is turned into an operator-role request (its `load`
and each decode's `expect` deleted, `profiles` kept), the whole file is piped through fill.py, and
each answer is compared with the committed record:
  - the five implemented operators' files must be answered in full and equal on `load` and `decodes`;
  - every other graph-vector file must be answered equal or declined, never wrong.
The only records left out are those in STEP_8 below: refused at load step 8 (the bounds pass of §8,
which fill.py does not implement, and which the grader never sends to an operator implementation).
"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "..", "ops-conformance")
FILL = os.path.join(HERE, "fill.py")
IMPLEMENTED = ["relu", "clamp", "add", "rescale", "conv"]

# file#id -> why load step 8 (§10.5, the bounds pass of §8) is the step that refuses it.
STEP_8 = {
    "vectors/rescale.jsonl#rescale-tie-half_up-s127-refused":
        "rq.p = [2^126 - 2^63, 2^126] plus the addend 2^126 reaches 2^127: product past i128 (§8.3, §7.1)",
    "vectors/rescale.jsonl#rescale-tie-half_even-s127-refused":
        "rq.p = [2^126 - 2^63, 2^126] plus the addend 2^126 reaches 2^127: product past i128 (§8.3, §7.1)",
    "vectors/rescale.jsonl#rescale-q-past-64":
        "rq.q = [2^63, 2^63 + 2] passes i64 while y fits (§14.1 item 6, §7.1 class acc)",
    "vectors/conv.jsonl#conv-tie-half_up-s127-refused":
        "rq.p = [2^126 - 2^63, 2^126] plus the addend 2^126 reaches 2^127: product past i128 (§8.3, §7.1)",
    "vectors/conv.jsonl#conv-tie-half_even-s127-refused":
        "rq.p = [2^126 - 2^63, 2^126] plus the addend 2^126 reaches 2^127: product past i128 (§8.3, §7.1)",
    "graphs/load_checks.jsonl#step8-empty-check-intersection":
        "relu's result [0, 5] meets its output's check [-5, -1] nowhere: empty intersection (§8.1)",
}


def request(record):
    """The operator-role request: the record without its computed fields, `profiles` kept."""
    req = {k: v for k, v in record.items() if k != "load"}
    req["decodes"] = [{k: v for k, v in d.items() if k != "expect"} for d in record["decodes"]]
    return req


def graph_vectors(path):
    with open(path) as f:
        records = [json.loads(line) for line in f]
    return [r for r in records if "graph" in r]


def fill(records):
    lines = "".join(json.dumps(request(r), separators=(",", ":"), sort_keys=True) + "\n"
                    for r in records)
    done = subprocess.run([sys.executable, FILL], input=lines, capture_output=True, text=True)
    return done.returncode, done.stderr, [json.loads(line) for line in done.stdout.splitlines()]


def grade(path, records):
    """Return {"passed": [...], "declined": [...], "wrong": [...], "skipped": [...]} of ids."""
    status, stderr, answers = fill(records)
    assert status == 0, f"{path}: exit status {status}: {stderr}"
    assert len(answers) == len(records), f"{path}: {len(answers)} answers to {len(records)} requests"
    name = os.path.relpath(path, SUITE)
    out = {"passed": [], "declined": [], "wrong": [], "skipped": []}
    for record, answer in zip(records, answers):
        key = f"{name}#{record['id']}"
        if set(answer) == {"id", "not_supported"}:
            assert answer["id"] == record["id"], f"{key}: declined with id {answer['id']!r}"
            out["declined"].append(key)
        elif key in STEP_8 and answer.get("load") == "ok":
            out["skipped"].append(key)
        elif (answer.get("load"), answer.get("decodes")) == (record["load"], record["decodes"]) \
                and answer == record:
            out["passed"].append(key)
        else:
            out["wrong"].append(key)
    return out


class CommittedVectors(unittest.TestCase):
    def check(self, path, must_answer):
        records = graph_vectors(path)
        result = grade(path, records)
        self.assertEqual(result["wrong"], [], "answers that differ from the committed records")
        if must_answer:
            self.assertEqual(result["declined"], [], "declined records of an implemented operator")
        print(f"{os.path.relpath(path, SUITE)}: {len(result['passed'])} passed, "
              f"{len(result['declined'])} declined, {len(result['skipped'])} skipped (step 8), "
              f"{len(result['wrong'])} wrong", file=sys.stderr)

    def test_implemented_operators(self):
        for op in IMPLEMENTED:
            with self.subTest(op=op):
                self.check(os.path.join(SUITE, "vectors", f"{op}.jsonl"), must_answer=True)

    def test_other_operators_and_graphs(self):
        paths = [os.path.join(SUITE, "vectors", f) for f in sorted(os.listdir(os.path.join(SUITE, "vectors")))
                 if f[:-len(".jsonl")] not in IMPLEMENTED]
        paths += [os.path.join(SUITE, "graphs", f) for f in sorted(os.listdir(os.path.join(SUITE, "graphs")))]
        for path in paths:
            with self.subTest(path=os.path.relpath(path, SUITE)):
                self.check(path, must_answer=False)

    def test_every_skip_is_still_refused(self):
        """Each STEP_8 record exists and is committed as refused at load."""
        for key, why in STEP_8.items():
            name, ident = key.split("#", 1)
            records = {r["id"]: r for r in graph_vectors(os.path.join(SUITE, name))}
            self.assertIn(ident, records, key)
            self.assertEqual(records[ident]["load"], "model_mismatch", key)
            self.assertTrue(why, key)

    def test_other_records_are_declined_in_place(self):
        lines = ['{"id":"s1","in":{},"modes":{},"op":"bucket","expect":{}}',
                 'not json',
                 '{"decodes":[],"graph":"00","id":"x","profiles":[],"extra":"1"}',
                 '{"bundle":{},"expect":{},"id":"b1","payload":"00"}']
        done = subprocess.run([sys.executable, FILL], input="\n".join(lines) + "\n",
                              capture_output=True, text=True)
        answers = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual([a["id"] for a in answers], ["s1", "?", "x", "b1"])
        self.assertTrue(all(set(a) == {"id", "not_supported"} for a in answers))
        self.assertEqual(done.returncode, 1)
        self.assertIn("line 2: ", done.stderr)
        self.assertIn("line 3: ", done.stderr)


if __name__ == "__main__":
    unittest.main()
