import { describe, expect, it } from "vitest";
import { Expectations } from "../../../src/controller/runtime/expectations.ts";
import { FakeClock } from "../fake-clock.ts";

describe("Expectations", () => {
  it("holds a key until every write it made shows in the cache", () => {
    const expectations = new Expectations({ clock: new FakeClock() });
    const seen = { a: false, b: false };
    expectations.expect("shop/web", () => seen.a);
    expectations.expect("shop/web", () => seen.b);
    expect(expectations.satisfied("shop/web")).toMatchObject({ satisfied: false, pending: 2 });
    seen.a = true;
    expect(expectations.satisfied("shop/web")).toMatchObject({ satisfied: false, pending: 1 });
    seen.b = true;
    expect(expectations.satisfied("shop/web")).toEqual({ satisfied: true });
    expect(expectations.satisfied("shop/other")).toEqual({ satisfied: true });
  });

  it("gives up after the timeout, in case the event was never delivered", async () => {
    const clock = new FakeClock();
    const expectations = new Expectations({ clock, timeoutMs: 1000 });
    expectations.expect("shop/web", () => false);
    expect(expectations.satisfied("shop/web")).toEqual({ satisfied: false, retryInMs: 1000, pending: 1 });
    await clock.advance(600);
    expect(expectations.satisfied("shop/web")).toMatchObject({ retryInMs: 400 });
    await clock.advance(400);
    expect(expectations.satisfied("shop/web")).toEqual({ satisfied: true });
  });

  it("forgets a key whose object is gone", () => {
    const expectations = new Expectations({ clock: new FakeClock() });
    expectations.expect("shop/web", () => false);
    expectations.forget("shop/web");
    expect(expectations.satisfied("shop/web")).toEqual({ satisfied: true });
  });
});
