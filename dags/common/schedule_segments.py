"""A replayed schedule cut into segments of ``S`` I/O moves, and what each segment charges at its boundaries.

The kernels' ``*_charges`` functions read schedules segment by segment with :func:`split_segments` and
:func:`shared_charges`, so the tests and the ``segments`` claim set check every step of a segment count on real
schedules (docs/definitions.md section 3, "Segment counts").
"""

from __future__ import annotations

__all__ = ["shared_charges", "split_segments"]


def split_segments(G, schedule, S: int, entry: dict) -> list[dict]:
    """The segments of ``S`` I/O moves of a schedule: red at the start and end, I/O, loads, computes, inputs read."""
    segments, red, seg = [], set(), None
    for op, v in schedule.moves:
        if seg is None:
            seg = {"start": set(red), "io": set(), "loaded": set(), "computed": set(), "read": set(), "a_read": set(),
                   "n_io": 0}
        if op == "compute":
            seg["computed"].add(v)
            seg["read"].update(u for u in G.predecessors(v) if G.in_degree(u) == 0)
            seg["a_read"].update(entry[u][1:3] for u in G.predecessors(v) if entry[u][:1] == ("A",))
            red.add(v)
        elif op == "delete":
            red.discard(v)
        else:
            seg["io"].add(v)
            seg["n_io"] += 1
            if op == "load":
                red.add(v)
                seg["loaded"].add(v)
            if seg["n_io"] == S:
                seg["end"] = set(red)
                segments.append(seg)
                seg = None
    if seg is not None:
        seg["end"] = set(red)
        if seg["n_io"] or seg["computed"] or not segments:
            segments.append(seg)
        else:  # only deletes after the last I/O move: they belong to the last segment (the proof's h = ceil(Q / S))
            segments[-1]["end"] = seg["end"]
    for seg in segments:  # step 11: the inputs red at each boundary, and those loaded
        for key in ("start", "end", "loaded"):
            seg[key + "_inputs"] = {u for u in seg[key] if G.in_degree(u) == 0}
    return segments


def shared_charges(seg, last: bool) -> dict:
    """Step 11's quantities of a segment: red non-inputs at its ends, ``|B'|`` and the inputs it could read."""
    end = set() if last else seg["end"] - seg["end_inputs"]
    return {"a": len(seg["start"]) - len(seg["start_inputs"]), "b": len(end),
            "B_shared": len(seg["start"] | seg["io"] | end),
            "inputs_available": len(seg["start_inputs"] | seg["loaded_inputs"])}
