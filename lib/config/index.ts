export { applyEnv, isDoc, lowerKeys, pick, typeEnvValue, type Doc } from "./env.ts";
export { fromDoc, loadKuiperConfig, type BasicSettings, type KuiperConfig } from "./kuiper.ts";
export { prepareDataDir, resolvePaths, type PathFlags, type Paths } from "./paths.ts";
