import type { KubeConfig } from '@kubernetes/client-node';

/** Options of `startKubefake`; every one is optional. */
export interface StartOptions {
  /** CRD manifests (files or directories) installed and established before the server is ready. */
  crds?: string | string[];
  /** Objects (files or directories) created before the server is ready, after the CRDs. */
  objects?: string | string[];
  /** Serve plain HTTP instead of HTTPS. */
  http?: boolean;
  /** Simulate a cluster: nodes, a scheduler, kubelets and the workload controllers. */
  simulate?: boolean;
  /** More `kubefake serve` flags, such as `['--authorization-mode', 'AlwaysAllow']`. */
  args?: string[];
  /** The binary to run instead of the platform package's (or $KUBEFAKE_BIN). */
  binary?: string;
  /** How long to wait for the server to be ready, in milliseconds (default 30000). */
  timeoutMs?: number;
}

/** A running `kubefake serve`. */
export interface Kubefake {
  /** The server's URL, such as `https://127.0.0.1:40123`. */
  readonly url: string;
  /** The path of the kubeconfig the server wrote (its CA and an admin token). */
  readonly kubeconfig: string;
  /** A KubeConfig loaded from that file (needs @kubernetes/client-node). */
  kubeConfig(): KubeConfig;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The server of a suite, as `useKubefake()` returns it: usable once `beforeAll` has run. */
export interface KubefakeFixture {
  /** The server's URL. */
  readonly url: string;
  /** The path of the kubeconfig the server wrote. */
  readonly kubeconfig: string;
  /** A KubeConfig loaded from that file (needs @kubernetes/client-node). */
  kubeConfig(): KubeConfig;
}

/** A test runner's suite hooks, as `useKubefakeWith` takes them. */
export interface SuiteHooks {
  beforeAll(fn: () => Promise<void>, timeoutMs?: number): unknown;
  afterAll(fn: () => Promise<void>, timeoutMs?: number): unknown;
  /** Passed to both hooks when given (Vitest and Jest take a timeout as second argument). */
  hookTimeoutMs?: number;
}

/** One server for a suite: started in `beforeAll`, stopped in `afterAll`. */
export function useKubefakeWith(hooks: SuiteHooks, options?: StartOptions): KubefakeFixture;
/** Starts `kubefake serve` on a free port; resolves once it is ready. */
export function startKubefake(options?: StartOptions): Promise<Kubefake>;
/** The kubefake binary this package runs. */
export function binaryPath(): string;
/** The platform package for this machine, such as `@kubefake/linux-x64`. */
export function platformPackage(): string;
