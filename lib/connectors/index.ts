/**
 * The one list of connector specs (spec.ts): a technology declared in its folder's spec.ts and
 * listed here appears in every registry — sources, sinks, lookups, named connections, confKeys,
 * `/metadata`, the connectivity checks, graph rules and the console.
 */
import { fileSpec } from "./file/spec.ts";
import { httpSpec } from "./http/spec.ts";
import { logSpec } from "./log/spec.ts";
import { memorySpec } from "./memory/spec.ts";
import { mqttSpec } from "./mqtt/spec.ts";
import { natsSpec } from "./nats/spec.ts";
import { redisSpec } from "./redis/spec.ts";
import { simulatorSpec } from "./simulator/spec.ts";
import type { ConnectorSpec } from "./spec.ts";
import { sqlSpec } from "./sql/spec.ts";
import { sseSpec } from "./sse/spec.ts";
import { websocketSpec } from "./websocket/spec.ts";

export const CONNECTORS: readonly ConnectorSpec[] = [fileSpec, httpSpec, logSpec, memorySpec, mqttSpec, natsSpec, redisSpec, simulatorSpec, sqlSpec, sseSpec, websocketSpec];
