"""Golden texts of the related-image match builder: one per shape, plus edited and relaxed rules.

Regenerate only on purpose (a changed text changes query plans: re-check them with GRAPH.EXPLAIN).
The texts hold no rule: every position is the same membership condition whatever its rule
(covr.related.cypher_path.MEMBERSHIP), so the edited, relaxed and exact branches of a shape share
one text and only the parameters differ.
"""

from __future__ import annotations

SHAPES = {
    "single": "man[tall]",
    "hop": "man-(wearing)->hat[red]",
    "chain": "man-(holding)->bat-(on)->table[wooden]",
    "v": "man{-(holding)->bat,-(wearing)->hat}",
    "frame_1": "man-(stapling|onto:wall)->paper",
    "frame_3": "man-(stapling|at:office|onto:wall|using:stapler)->paper",
}

EXACT = {
    "single": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END] WHERE covr_x IS NOT NULL]) AS readings""",
    "hop": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END] WHERE covr_x IS NOT NULL]) AS readings""",
    "chain": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (o1)-[:SUBJ]->(r1:Relation)-[:OBJ]->(o2:Object)
WHERE (toString(r1.name) IN $b0_r1_in OR ($b0_r1_open AND NOT toString(r1.name) IN $b0_r1_out))
  AND (toString(o2.name) IN $b0_o2_in OR ($b0_o2_open AND NOT toString(o2.name) IN $b0_o2_out))
  AND ($b0_a2_free OR any(a IN o2.attributes WHERE a IN $b0_a2_in OR ($b0_a2_open AND NOT a IN $b0_a2_out)))
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_o2_read THEN o2.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_a2_read THEN coalesce(o2.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END, CASE WHEN $b0_r1_read THEN r1.name END] WHERE covr_x IS NOT NULL]) AS readings""",
    "v": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (o0)-[:SUBJ]->(r1:Relation)-[:OBJ]->(o2:Object)
WHERE (toString(r1.name) IN $b0_r1_in OR ($b0_r1_open AND NOT toString(r1.name) IN $b0_r1_out))
  AND (toString(o2.name) IN $b0_o2_in OR ($b0_o2_open AND NOT toString(o2.name) IN $b0_o2_out))
  AND ($b0_a2_free OR any(a IN o2.attributes WHERE a IN $b0_a2_in OR ($b0_a2_open AND NOT a IN $b0_a2_out)))
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_o2_read THEN o2.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_a2_read THEN coalesce(o2.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END, CASE WHEN $b0_r1_read THEN r1.name END] WHERE covr_x IS NOT NULL]) AS readings""",
    "frame_1": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (r0)-[:MOD]->(m0:RelMod)-[:OBJ]->(o2:Object)
WHERE (toString(m0.name) IN $b0_m0_in OR ($b0_m0_open AND NOT toString(m0.name) IN $b0_m0_out))
  AND (toString(o2.name) IN $b0_o2_in OR ($b0_o2_open AND NOT toString(o2.name) IN $b0_o2_out))
  AND ($b0_a2_free OR any(a IN o2.attributes WHERE a IN $b0_a2_in OR ($b0_a2_open AND NOT a IN $b0_a2_out)))
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_o2_read THEN o2.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_a2_read THEN coalesce(o2.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END, CASE WHEN $b0_m0_read THEN m0.name END] WHERE covr_x IS NOT NULL]) AS readings""",
    "frame_3": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (r0)-[:MOD]->(m0:RelMod)-[:OBJ]->(o2:Object)
WHERE (toString(m0.name) IN $b0_m0_in OR ($b0_m0_open AND NOT toString(m0.name) IN $b0_m0_out))
  AND (toString(o2.name) IN $b0_o2_in OR ($b0_o2_open AND NOT toString(o2.name) IN $b0_o2_out))
  AND ($b0_a2_free OR any(a IN o2.attributes WHERE a IN $b0_a2_in OR ($b0_a2_open AND NOT a IN $b0_a2_out)))
  AND o2 <> o0
  AND o2 <> o1
WITH i, o0, r0, o1, m0, o2
MATCH (r0)-[:MOD]->(m1:RelMod)-[:OBJ]->(o3:Object)
WHERE (toString(m1.name) IN $b0_m1_in OR ($b0_m1_open AND NOT toString(m1.name) IN $b0_m1_out))
  AND (toString(o3.name) IN $b0_o3_in OR ($b0_o3_open AND NOT toString(o3.name) IN $b0_o3_out))
  AND ($b0_a3_free OR any(a IN o3.attributes WHERE a IN $b0_a3_in OR ($b0_a3_open AND NOT a IN $b0_a3_out)))
  AND o3 <> o0
  AND o3 <> o1
  AND o3 <> o2
WITH i, o0, r0, o1, m0, o2, m1, o3
MATCH (r0)-[:MOD]->(m2:RelMod)-[:OBJ]->(o4:Object)
WHERE (toString(m2.name) IN $b0_m2_in OR ($b0_m2_open AND NOT toString(m2.name) IN $b0_m2_out))
  AND (toString(o4.name) IN $b0_o4_in OR ($b0_o4_open AND NOT toString(o4.name) IN $b0_o4_out))
  AND ($b0_a4_free OR any(a IN o4.attributes WHERE a IN $b0_a4_in OR ($b0_a4_open AND NOT a IN $b0_a4_out)))
  AND o4 <> o0
  AND o4 <> o1
  AND o4 <> o2
  AND o4 <> o3
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_o2_read THEN o2.name END, CASE WHEN $b0_o3_read THEN o3.name END, CASE WHEN $b0_o4_read THEN o4.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_a2_read THEN coalesce(o2.attributes, []) END, CASE WHEN $b0_a3_read THEN coalesce(o3.attributes, []) END, CASE WHEN $b0_a4_read THEN coalesce(o4.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END, CASE WHEN $b0_m0_read THEN m0.name END, CASE WHEN $b0_m1_read THEN m1.name END, CASE WHEN $b0_m2_read THEN m2.name END] WHERE covr_x IS NOT NULL]) AS readings""",
}

UNION = """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b0_o0_in OR ($b0_o0_open AND NOT toString(o0.name) IN $b0_o0_out))
  AND ($b0_a0_free OR any(a IN o0.attributes WHERE a IN $b0_a0_in OR ($b0_a0_open AND NOT a IN $b0_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b0_r0_in OR ($b0_r0_open AND NOT toString(r0.name) IN $b0_r0_out))
  AND (toString(o1.name) IN $b0_o1_in OR ($b0_o1_open AND NOT toString(o1.name) IN $b0_o1_out))
  AND ($b0_a1_free OR any(a IN o1.attributes WHERE a IN $b0_a1_in OR ($b0_a1_open AND NOT a IN $b0_a1_out)))
  AND o1 <> o0
RETURN i.id AS image_id, $b0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b0_o0_read THEN o0.name END, CASE WHEN $b0_o1_read THEN o1.name END, CASE WHEN $b0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b0_r0_read THEN r0.name END] WHERE covr_x IS NOT NULL]) AS readings
UNION ALL
UNWIND $b1_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $b1_o0_in OR ($b1_o0_open AND NOT toString(o0.name) IN $b1_o0_out))
  AND ($b1_a0_free OR any(a IN o0.attributes WHERE a IN $b1_a0_in OR ($b1_a0_open AND NOT a IN $b1_a0_out)))
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $b1_r0_in OR ($b1_r0_open AND NOT toString(r0.name) IN $b1_r0_out))
  AND (toString(o1.name) IN $b1_o1_in OR ($b1_o1_open AND NOT toString(o1.name) IN $b1_o1_out))
  AND ($b1_a1_free OR any(a IN o1.attributes WHERE a IN $b1_a1_in OR ($b1_a1_open AND NOT a IN $b1_a1_out)))
  AND o1 <> o0
RETURN i.id AS image_id, $b1_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $b1_o0_read THEN o0.name END, CASE WHEN $b1_o1_read THEN o1.name END, CASE WHEN $b1_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $b1_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $b1_r0_read THEN r0.name END] WHERE covr_x IS NOT NULL]) AS readings"""

ANCHORED_KEY = "man-(stapling|onto:wall)->paper[white]"

ANCHORED = """\
MATCH (m0:RelMod)
WHERE m0.name = $d0_m0
WITH m0
MATCH (r0:Relation)-[:MOD]->(m0)
WHERE (toString(r0.name) IN $d0_r0_in OR ($d0_r0_open AND NOT toString(r0.name) IN $d0_r0_out))
WITH m0, r0
MATCH (m0)-[:OBJ]->(o2:Object)
WHERE (toString(o2.name) IN $d0_o2_in OR ($d0_o2_open AND NOT toString(o2.name) IN $d0_o2_out))
  AND ($d0_a2_free OR any(a IN o2.attributes WHERE a IN $d0_a2_in OR ($d0_a2_open AND NOT a IN $d0_a2_out)))
WITH m0, r0, o2
MATCH (o0:Object)-[:SUBJ]->(r0)
WHERE (toString(o0.name) IN $d0_o0_in OR ($d0_o0_open AND NOT toString(o0.name) IN $d0_o0_out))
  AND ($d0_a0_free OR any(a IN o0.attributes WHERE a IN $d0_a0_in OR ($d0_a0_open AND NOT a IN $d0_a0_out)))
  AND o0 <> o2
WITH m0, r0, o2, o0
MATCH (r0)-[:OBJ]->(o1:Object)
WHERE (toString(o1.name) IN $d0_o1_in OR ($d0_o1_open AND NOT toString(o1.name) IN $d0_o1_out))
  AND ($d0_a1_free OR any(a IN o1.attributes WHERE a IN $d0_a1_in OR ($d0_a1_open AND NOT a IN $d0_a1_out)))
  AND o1 <> o2
  AND o1 <> o0
WITH m0, r0, o2, o0, o1
MATCH (i:Image)-[:HAS]->(o0)
WHERE i.split = $d0_split
RETURN DISTINCT i.id AS image_id, $d0_tag AS tag"""

ANCHORED_COUNTING = """\
MATCH (m0:RelMod)
WHERE m0.name = $d0_m0
WITH m0
MATCH (r0:Relation)-[:MOD]->(m0)
WHERE (toString(r0.name) IN $d0_r0_in OR ($d0_r0_open AND NOT toString(r0.name) IN $d0_r0_out))
WITH m0, r0, CASE WHEN r0.name = $d0_eq_r0 THEN 0 ELSE 1 END AS c0
WHERE c0 <= $d0_max
MATCH (m0)-[:OBJ]->(o2:Object)
WHERE (toString(o2.name) IN $d0_o2_in OR ($d0_o2_open AND NOT toString(o2.name) IN $d0_o2_out))
  AND ($d0_a2_free OR any(a IN o2.attributes WHERE a IN $d0_a2_in OR ($d0_a2_open AND NOT a IN $d0_a2_out)))
WITH m0, r0, o2, c0, c0 + CASE WHEN o2.name = $d0_eq_o2 THEN 0 ELSE 1 END + CASE WHEN $d0_a2_free OR $d0_eq_a2 IN o2.attributes THEN 0 ELSE 1 END AS c1
WHERE c1 <= $d0_max
MATCH (o0:Object)-[:SUBJ]->(r0)
WHERE (toString(o0.name) IN $d0_o0_in OR ($d0_o0_open AND NOT toString(o0.name) IN $d0_o0_out))
  AND ($d0_a0_free OR any(a IN o0.attributes WHERE a IN $d0_a0_in OR ($d0_a0_open AND NOT a IN $d0_a0_out)))
  AND o0 <> o2
WITH m0, r0, o2, o0, c1, c1 + CASE WHEN o0.name = $d0_eq_o0 THEN 0 ELSE 1 END + CASE WHEN $d0_a0_free OR $d0_eq_a0 IN o0.attributes THEN 0 ELSE 1 END AS c2
WHERE c2 <= $d0_max
MATCH (r0)-[:OBJ]->(o1:Object)
WHERE (toString(o1.name) IN $d0_o1_in OR ($d0_o1_open AND NOT toString(o1.name) IN $d0_o1_out))
  AND ($d0_a1_free OR any(a IN o1.attributes WHERE a IN $d0_a1_in OR ($d0_a1_open AND NOT a IN $d0_a1_out)))
  AND o1 <> o2
  AND o1 <> o0
WITH m0, r0, o2, o0, o1, c2, c2 + CASE WHEN o1.name = $d0_eq_o1 THEN 0 ELSE 1 END + CASE WHEN $d0_a1_free OR $d0_eq_a1 IN o1.attributes THEN 0 ELSE 1 END AS c3
WHERE c3 <= $d0_max
MATCH (i:Image)-[:HAS]->(o0)
WHERE i.split = $d0_split
RETURN i.id AS image_id, $d0_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $d0_o0_read THEN o0.name END, CASE WHEN $d0_o1_read THEN o1.name END, CASE WHEN $d0_o2_read THEN o2.name END, CASE WHEN $d0_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $d0_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $d0_a2_read THEN coalesce(o2.attributes, []) END, CASE WHEN $d0_r0_read THEN r0.name END, CASE WHEN $d0_m0_read THEN m0.name END] WHERE covr_x IS NOT NULL]) AS readings"""

COMBINED_KEY = "man[tall]-(wearing)->hat[red]"

COMBINED = """\
UNWIND $c_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE (toString(o0.name) IN $c_o0_in OR ($c_o0_open AND NOT toString(o0.name) IN $c_o0_out))
  AND ($c_a0_free OR any(a IN o0.attributes WHERE a IN $c_a0_in OR ($c_a0_open AND NOT a IN $c_a0_out)))
WITH i, o0, CASE WHEN o0.name = $c_eq_o0 THEN 0 ELSE 1 END + CASE WHEN $c_a0_free OR $c_eq_a0 IN o0.attributes THEN 0 ELSE 1 END AS c0
WHERE c0 <= $c_max
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE (toString(r0.name) IN $c_r0_in OR ($c_r0_open AND NOT toString(r0.name) IN $c_r0_out))
  AND (toString(o1.name) IN $c_o1_in OR ($c_o1_open AND NOT toString(o1.name) IN $c_o1_out))
  AND ($c_a1_free OR any(a IN o1.attributes WHERE a IN $c_a1_in OR ($c_a1_open AND NOT a IN $c_a1_out)))
  AND o1 <> o0
WITH i, o0, r0, o1, c0, c0 + CASE WHEN r0.name = $c_eq_r0 THEN 0 ELSE 1 END + CASE WHEN o1.name = $c_eq_o1 THEN 0 ELSE 1 END + CASE WHEN $c_a1_free OR $c_eq_a1 IN o1.attributes THEN 0 ELSE 1 END AS c1
WHERE c1 <= $c_max
RETURN i.id AS image_id, $c_tag AS tag, collect(DISTINCT [covr_x IN [CASE WHEN $c_o0_read THEN o0.name END, CASE WHEN $c_o1_read THEN o1.name END, CASE WHEN $c_a0_read THEN coalesce(o0.attributes, []) END, CASE WHEN $c_a1_read THEN coalesce(o1.attributes, []) END, CASE WHEN $c_r0_read THEN r0.name END] WHERE covr_x IS NOT NULL]) AS readings"""
