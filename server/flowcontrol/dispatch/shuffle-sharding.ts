// Shuffle sharding and the flow hash, as kube's k8s.io/apiserver/pkg/util/shufflesharding
// (Dealer) and apf_controller.go's hashFlowID: a flow (FlowSchema name + distinguisher) is hashed
// with SHA-256 and its first 8 bytes (little-endian) deal a hand of handSize distinct queues out of
// the level's deck. The same flow always gets the same hand, so a heavy flow only crowds its hand.
import { createHash } from 'node:crypto';

/** kube's MaxHashBits: a hand may need no more entropy than this. */
const MAX_HASH_BITS = 60;
/**
 * Flows' hashes and hands are kept (both are pure functions of their inputs): a SHA-256 and a
 * BigInt deal per request cost about 2 µs, a Map hit almost nothing. Bounded: cleared when full.
 */
const CACHE_LIMIT = 4096;

export class Dealer {
  private constructor(
    readonly deckSize: number,
    readonly handSize: number,
  ) {}

  private readonly hands = new Map<bigint, readonly number[]>();

  /** shufflesharding.NewDealer: undefined (and why) when the sizes make no valid dealer. */
  static of(deckSize: number, handSize: number): Dealer | string {
    if (deckSize <= 0 || handSize <= 0) return `deckSize ${deckSize} or handSize ${handSize} is not positive`;
    if (handSize > deckSize) return `handSize ${handSize} is greater than deckSize ${deckSize}`;
    if (deckSize > 1 << 26) return `deckSize ${deckSize} is impractically large`;
    if (Math.ceil(Math.log2(deckSize) * handSize) > MAX_HASH_BITS) return `required entropy bits of deckSize ${deckSize} and handSize ${handSize} is greater than ${MAX_HASH_BITS}`;
    return new Dealer(deckSize, handSize);
  }

  /** Dealer.DealIntoHand: the hand's queue indices, in deal order (the same array for the same hash: do not change it). */
  deal(hashValue: bigint): readonly number[] {
    let hand = this.hands.get(hashValue);
    if (hand === undefined) {
      if (this.hands.size >= CACHE_LIMIT) this.hands.clear();
      hand = this.dealAnew(hashValue);
      this.hands.set(hashValue, hand);
    }
    return hand;
  }

  private dealAnew(hashValue: bigint): number[] {
    const remainders: number[] = [];
    let h = hashValue;
    for (let i = 0; i < this.handSize; i++) {
      const d = BigInt(this.deckSize - i);
      remainders.push(Number(h % d));
      h /= d;
    }
    const hand: number[] = [];
    for (let i = 0; i < this.handSize; i++) {
      let card = remainders[i];
      for (let j = i; j > 0; j--) if (card >= remainders[j - 1]) card++;
      hand.push(card);
    }
    return hand;
  }
}

/** apf_controller.go's hashFlowID: SHA-256 of name, a zero byte, distinguisher; first 8 bytes little-endian. */
export function hashFlowId(flowSchemaName: string, flowDistinguisher: string): bigint {
  const key = `${flowSchemaName}\0${flowDistinguisher}`;
  let hash = flowHashes.get(key);
  if (hash === undefined) {
    if (flowHashes.size >= CACHE_LIMIT) flowHashes.clear();
    hash = createHash('sha256').update(flowSchemaName).update(ZERO).update(flowDistinguisher).digest().readBigUInt64LE(0);
    flowHashes.set(key, hash);
  }
  return hash;
}

const flowHashes = new Map<string, bigint>();

const ZERO = Buffer.from([0]);
