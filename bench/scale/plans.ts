import type pg from "pg";

/** One line of EXPLAIN (ANALYZE, BUFFERS) per statement: plan nodes, indexes, time, buffers. */
export interface PlanSummary {
  label: string;
  nodes: string;
  executionMs: number;
  sharedHit: number;
  sharedRead: number;
  seqScanOnUsersOrSessions: boolean;
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Scan Direction"?: string;
  "Sort Method"?: string;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

function describeNode(n: PlanNode): string {
  const backward = n["Scan Direction"] === "Backward" && !n["Node Type"].includes("Backward") ? " Backward" : "";
  const on = n["Index Name"] ? ` using ${n["Index Name"]}` : n["Relation Name"] ? ` on ${n["Relation Name"]}` : "";
  const sort = n["Sort Method"] ? ` (${n["Sort Method"]})` : "";
  return `${n["Node Type"]}${backward}${on}${sort}`;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement with its parameters inlined (as MikroORM sends them). */
export async function explain(client: pg.Client, label: string, sql: string, params: unknown[] = []): Promise<PlanSummary> {
  const res = await client.query(`explain (analyze, buffers, format json) ${sql}`, params);
  const top = (res.rows[0] as { "QUERY PLAN": [{ Plan: PlanNode; "Execution Time": number }] })["QUERY PLAN"][0];
  const nodes = flatten(top.Plan);
  return {
    label,
    nodes: nodes.map(describeNode).join(" > "),
    executionMs: top["Execution Time"],
    sharedHit: top.Plan["Shared Hit Blocks"] ?? 0,
    sharedRead: top.Plan["Shared Read Blocks"] ?? 0,
    seqScanOnUsersOrSessions: nodes.some((n) => n["Node Type"] === "Seq Scan" && (n["Relation Name"] === "users" || n["Relation Name"] === "sessions")),
  };
}

export function formatPlans(plans: PlanSummary[]): string {
  return plans
    .map((p) => `  ${p.label}: ${p.executionMs.toFixed(2)} ms, buffers hit ${p.sharedHit} read ${p.sharedRead}${p.seqScanOnUsersOrSessions ? "  [SEQ SCAN]" : ""}\n      ${p.nodes}`)
    .join("\n");
}
