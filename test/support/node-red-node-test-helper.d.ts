// The part of node-red-node-test-helper's API the tests use (the package ships no types).
declare module 'node-red-node-test-helper' {
  import { EventEmitter } from 'events';
  type NodeModule = (RED: unknown) => void;
  interface TestNode extends EventEmitter {
    id: string;
    type: string;
    receive(msg: Record<string, unknown>): void;
    [property: string]: unknown;
  }
  interface Helper {
    init(runtimePath: string, userSettings?: Record<string, unknown>): void;
    load(
      nodes: NodeModule | NodeModule[],
      flow: Record<string, unknown>[],
      credentials?: Record<string, Record<string, string>>,
    ): Promise<void>;
    unload(): Promise<void>;
    getNode(id: string): TestNode;
    setFlows(flow: Record<string, unknown>[], type?: string, credentials?: Record<string, Record<string, string>>): Promise<void>;
    startServer(done: (err?: Error) => void): void;
    stopServer(done: (err?: Error) => void): void;
    url(): string;
    request(): import('supertest').SuperTest<import('supertest').Test>;
    log(): { args: unknown[][]; getCalls(): { args: unknown[] }[] };
    clearFlows(): Promise<void>;
  }
  const helper: Helper;
  export = helper;
}
declare module 'supertest' {
  interface Test extends Promise<{ status: number; body: unknown; text: string }> {
    send(body: unknown): Test;
    set(name: string, value: string): Test;
    expect(status: number): Test;
  }
  interface SuperTest<T> {
    get(url: string): T;
    post(url: string): T;
    put(url: string): T;
    delete(url: string): T;
  }
}
