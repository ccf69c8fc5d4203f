/**
 * Sink connectors by action type (rules-and-sinks.md §1.2): `sink <type> is not defined` for any
 * other. Connector properties are validated first, then the common ones.
 */
import { EngineError } from "../errors.ts";
import type { Props } from "../config/props.ts";
import type { SinkConnector } from "../sink/connector.ts";
import { CONNECTORS } from "./index.ts";
import { rolesOf, type ConnectorSpec, type SinkEnv } from "./spec.ts";

export type { SinkEnv } from "./spec.ts";

/** The sink connectors of a list of connector specs, by action type (case-sensitive). */
export interface SinkRegistry {
  readonly types: readonly string[];
  /** A connector of `type`; `sink <type> is not defined` for any other. Connector properties are validated first. */
  create(type: string, props: Props, env: SinkEnv): SinkConnector;
}

export function createSinkRegistry(specs: readonly ConnectorSpec[]): SinkRegistry {
  const roles = rolesOf(specs, "sinks");
  return {
    types: [...roles.keys()],
    create: (type, props, env) => {
      const r = roles.get(type);
      if (!r) throw new EngineError(`sink ${type} is not defined`);
      return r.create(props, env);
    },
  };
}

/**
 * The sink connectors of every connector spec (connectors/index.ts). Each connector's module (and
 * the client library behind it) loads with the first action of its type, so that pipe mode and an
 * idle daemon do not carry the ones they never use (start-up time and memory).
 */
const SINKS = createSinkRegistry(CONNECTORS);

/** Every sink connector type (action types). */
export const SINK_TYPES: readonly string[] = SINKS.types;

/** A connector of `type`; `sink <type> is not defined` for any other. Connector properties are validated first. */
export function createSinkConnector(type: string, props: Props, env: SinkEnv): SinkConnector {
  return SINKS.create(type, props, env);
}
