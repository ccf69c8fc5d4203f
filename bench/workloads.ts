/**
 * bench.md's five workloads: topics, device counts, payload kind, the stream and rule, and which
 * exact proof applies. Message k of connection c (of `conns`) is device `(k * conns + c) % devices`
 * (round-robin over the global sequence), temp = 20.0 + (k % 150) / 10, speed = (k % 1300) / 10.
 */
export type BaseId = "w1" | "w2" | "w3" | "w4" | "w5";
/** bench.md's five, and the two on the ladder: W1 at QoS 1 end to end, W2 over a million devices. */
export type WorkloadId = BaseId | "w1-qos1" | "w2-1m";
export type ProofKind = "filter" | "transform" | "window";

export interface Workload {
  readonly id: WorkloadId;
  /** The bench.md workload whose rule and proof this one runs (itself for the five). */
  readonly base: BaseId;
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
  /** QoS of the generator's publishes and of the engine's subscription. */
  readonly qos: 0 | 1;
}

const SELECTS: Record<BaseId, string> = {
  w1: "SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0",
  w2: "SELECT device, count(*) AS n, avg(temp) AS avg_temp, max(speed) AS max_speed FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)",
  w3: "SELECT meta(topic) AS topic, self AS state FROM telem",
  w4: "SELECT device, count(*) AS n, avg(speed) AS avg_speed, max(temp) AS max_temp FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)",
  w5: "SELECT device, count(*) AS n, max(speed) AS max_power FROM telem GROUP BY device, SESSIONWINDOW(ss, 10, 2)",
};

const BASE: Record<BaseId, Workload> = {
  w1: {
    id: "w1",
    base: "w1",
    title: "W1 telemetry filter",
    devices: 1_000,
    topic: () => "bench/telemetry",
    subscription: "bench/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w1,
    qos: 0,
    proof: "filter",
  },
  w2: {
    id: "w2",
    base: "w2",
    title: "W2 per-device windows",
    devices: 1_000,
    topic: () => "bench/telemetry",
    subscription: "bench/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w2,
    qos: 0,
    proof: "window",
  },
  w3: {
    id: "w3",
    base: "w3",
    title: "W3 ESPHome text",
    devices: 10_000,
    topic: (d) => `bench/esphome/${d}/sensor/temperature/state`,
    subscription: "bench/esphome/+/sensor/temperature/state",
    payload: "text",
    format: "binary",
    sql: SELECTS.w3,
    qos: 0,
    proof: "transform",
  },
  w4: {
    id: "w4",
    base: "w4",
    title: "W4 vehicles",
    devices: 10_000,
    topic: (d) => `bench/vehicles/${d}/telemetry`,
    subscription: "bench/vehicles/+/telemetry",
    payload: "json",
    format: "json",
    sql: SELECTS.w4,
    qos: 0,
    proof: "window",
  },
  w5: {
    id: "w5",
    base: "w5",
    title: "W5 EV chargers",
    devices: 2_000,
    topic: (d) => `bench/chargers/${d}/session`,
    subscription: "bench/chargers/+/session",
    payload: "json",
    format: "json",
    sql: SELECTS.w5,
    qos: 0,
    proof: "window",
  },
};

export const WORKLOADS: Record<WorkloadId, Workload> = {
  ...BASE,
  /** W1 with the generator publishing at QoS 1 and the rule's source subscribed at QoS 1 (the broker delivers QoS 1). */
  "w1-qos1": { ...BASE.w1, id: "w1-qos1", title: "W1 at QoS 1", qos: 1 },
  /** W2's per-device 10 s window over a million devices: at 100k msg/s a window holds a million groups. */
  "w2-1m": { ...BASE.w2, id: "w2-1m", title: "W2 over 1,000,000 devices", devices: 1_000_000 },
};

/** bench.md's five (replay, the floor pairs, Node-RED). */
export const WORKLOAD_IDS: BaseId[] = ["w1", "w2", "w3", "w4", "w5"];
/** Every workload of the MQTT ladder. */
export const LADDER_IDS: WorkloadId[] = [...WORKLOAD_IDS, "w1-qos1", "w2-1m"];

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
