"""What faults did to the data: the records clients were told were written
against what the log holds afterwards, and the offsets a consumer group
committed against what its members were given.

Producer side (`check_log`): `acked` is {record id: (partition, offset)}
from the delivery reports, `log` is {partition: [(offset, record id)]} read
back from the beginning. Counted:
- lost: acknowledged, not in the log;
- moved: in the log at another offset than the acknowledgement named;
- duplicated: in the log more than once (acknowledged or not: a retried
  batch must not be appended twice);
- reordered: ids of one producer's partition not increasing with offset
  (ids are numbered in production order per partition).

Consumer side (`check_group`): `consumed` is {partition: [offsets given to
the group's members, in delivery order, across restarts]}, `committed` is
{partition: the group's committed offset at the end}, `ends` {partition:
log end}. Counted:
- skipped: offsets below the committed one never given to any member
  (a commit that ran ahead of consumption loses records);
- beyond_end: a committed offset past the log end;
- redelivered: offsets given more than once (what at-least-once allows
  after a crash; reported, not a failure).
"""


def check_log(acked, log):
    where = {}
    duplicated, reordered = [], []
    for p, records in log.items():
        last = None
        for offset, rid in records:
            if rid in where:
                duplicated.append((rid, where[rid], (p, offset)))
            else:
                where[rid] = (p, offset)
            if last is not None and rid <= last:
                reordered.append((p, offset, rid, last))
            last = rid
    lost = sorted(rid for rid in acked if rid not in where)
    moved = sorted((rid, acked[rid], where[rid]) for rid in acked if rid in where and where[rid] != acked[rid])
    return {"acknowledged": len(acked), "stored": len(where), "lost": lost, "moved": moved,
            "duplicated": duplicated, "reordered": reordered}


def check_group(consumed, committed, ends):
    skipped, beyond, redelivered = {}, {}, 0
    for p, end in ends.items():
        given = consumed.get(p, [])
        seen = set(given)
        redelivered += len(given) - len(seen)
        c = committed.get(p, -1)
        if c > end:
            beyond[p] = (c, end)
        missing = [o for o in range(0, max(c, 0)) if o not in seen]
        if missing:
            skipped[p] = missing
    return {"skipped": skipped, "beyond_end": beyond, "redelivered": redelivered}


def failures(log_report, group_report=None):
    """The counts that must be zero, as 'name: count (first few)' strings."""
    out = []
    for key in ("lost", "moved", "duplicated", "reordered"):
        if log_report[key]:
            out.append("%s: %d (%r)" % (key, len(log_report[key]), log_report[key][:3]))
    if group_report is not None:
        for key in ("skipped", "beyond_end"):
            if group_report[key]:
                out.append("%s: %r" % (key, dict(list(group_report[key].items())[:3])))
    return out
