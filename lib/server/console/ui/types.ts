/** The shapes of `/ui/events` (lib/server/console/sampler.ts). */
export interface TotalsPoint { t: number; in: number; out: number; drop: number }
export interface SystemSample { version: string; upTimeSeconds: number; cpu: number; rss: number; heapUsed: number; lagMs: number; safeMode: boolean }
export interface RuleSample { id: string; state: string; message: string; in: number; out: number; errors: number; inRate: number; outRate: number; dropRate: number }
export interface NodeSample { kind: string; name: string; in: number; out: number; inRate: number; outRate: number; errors: number; buffer: number; latencyUs: number; lastException: string; lastExceptionTime: number }
export interface Topo { sources: string[]; edges: Record<string, string[]> }
export interface RuleDetail { id: string; topo: Topo | null; nodes: NodeSample[]; errors: RuleError[] }
export interface RuleError { node: string; message: string; count: number; first: number; last: number; payload: string }
export interface Sample { t: number; system: SystemSample; totals: TotalsPoint; states: Record<string, number>; rules: RuleSample[]; sources: number; rule?: RuleDetail | null }
