/**
 * bench.md's five workloads: topics, device counts, payload kind, the stream and rule, and which
 * exact proof applies. Message k of connection c (of `conns`) is device `(k * conns + c) % devices`
 * (round-robin over the global sequence), temp = 20.0 + (k % 150) / 10, speed = (k % 1300) / 10.
 */
export type WorkloadId = "w1" | "w2" | "w3" | "w4" | "w5";
export type ProofKind = "filter" | "transform" | "window";

export interface Workload {
  readonly id: WorkloadId;
  readonly title: string;
  readonly devices: number;
  /** Topic of a device's messages (`dev_<n>` or, for the warm-up, `warm_<n>`). */
  topic(device: string): string;
  /** The subscription (DATASOURCE). */
  readonly subscription: string;
  readonly payload: "json" | "text";
  /** eKuiper stream format. */
  readonly format: "json" | "binary";
  /** The rule's SELECT (also in bench/rules/<id>.sql). */
  readonly sql: string;
  readonly proof: ProofKind;
}

const SELECTS: Record<WorkloadId, string> = {
  w1: "SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0",
  w2: "SELECT device, count(*) AS n, avg(temp) AS avg_temp, max(speed) AS max_speed FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)",
  w3: "SELECT meta(topic) AS topic, self AS state FROM telem",
  w4: "SELECT device, count(*) AS n, avg(speed) AS avg_speed, max(temp) AS max_temp FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)",
  w5: "SELECT device, count(*) AS n, max(speed) AS max_power FROM telem GROUP BY device, SESSIONWINDOW(ss, 10, 2)",
};

export const WORKLOADS: Record<WorkloadId, Workload> = {
  w1: {
    id: "w1",
    title: "W1 telemetry filter",
    devices: 1_000,
    topic: () => "bench/telemetry",
    subscription: "bench/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w1,
    proof: "filter",
  },
  w2: {
    id: "w2",
    title: "W2 per-device windows",
    devices: 1_000,
    topic: () => "bench/telemetry",
    subscription: "bench/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w2,
    proof: "window",
  },
  w3: {
    id: "w3",
    title: "W3 ESPHome text",
    devices: 10_000,
    topic: (d) => `bench/esphome/${d}/sensor/temperature/state`,
    subscription: "bench/esphome/+/sensor/temperature/state",
    payload: "text",
    format: "binary",
    sql: SELECTS.w3,
    proof: "transform",
  },
  w4: {
    id: "w4",
    title: "W4 vehicles",
    devices: 10_000,
    topic: (d) => `bench/vehicles/${d}/telemetry`,
    subscription: "bench/vehicles/+/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w4,
    proof: "window",
  },
  w5: {
    id: "w5",
    title: "W5 EV chargers",
    devices: 2_000,
    topic: (d) => `bench/chargers/${d}/session`,
    subscription: "bench/chargers/+/session",
    payload: "json",
    format: "json",
    sql: SELECTS.w5,
    proof: "window",
  },
};

export const WORKLOAD_IDS = Object.keys(WORKLOADS) as WorkloadId[];

/** `CREATE STREAM telem` for the MQTT workloads (schemaless, as the published runs declare it). */
export function streamSql(w: Workload, confKey?: string): string {
  const key = confKey ? `, CONF_KEY="${confKey}"` : "";
  return `CREATE STREAM telem () WITH (TYPE="mqtt", DATASOURCE="${w.subscription}", FORMAT="${w.format}"${key})`;
}

/** The device index of message k on connection c. */
export function deviceOf(c: number, k: number, conns: number, devices: number): number {
  return (k * conns + c) % devices;
}

/** W1's filter: temp = 20.0 + (k % 150) / 10 > 21.0. */
export function passesW1(k: number): boolean {
  return k % 150 > 10;
}
