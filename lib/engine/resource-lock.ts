/**
 * LeaderElectionRecord is what a leader writes into its lock: who holds it,
 * for how long a holder that stops renewing keeps it, and when it was taken
 * and last renewed (epoch milliseconds, written as MicroTime).
 */
export interface LeaderElectionRecord {
  /** Empty when nobody holds the lock (a leader released it). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: number;
  renewTime: number;
  leaseTransitions: number;
}

/** LockRead is a record as read from the lock, with its serialized form to tell changes apart. */
export interface LockRead {
  record: LeaderElectionRecord;
  raw: string;
}

/**
 * ResourceLock is where candidates meet. Every write is conditional on the
 * version of the last read or write (optimistic concurrency): a write that
 * lost a race rejects with a conflict, and the caller reads again.
 */
export interface ResourceLock {
  /** Describes the lock in messages: `Lease kube-system/my-controller`. */
  describe(): string;
  /** get reads the record; resolves undefined when the lock object does not exist. */
  get(signal: AbortSignal): Promise<LockRead | undefined>;
  /** create makes the lock object with this record; rejects when it already exists. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /** update replaces the record, on condition that nobody wrote since this lock's last read or write. */
  update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /**
   * watch calls onChange with the record each time it is written, and with
   * undefined when the lock object is deleted, until signal aborts. Optional:
   * it lets a standby see renews as they happen and a release at once,
   * rather than at its next retry.
   */
  watch?(onChange: (read: LockRead | undefined) => void, signal: AbortSignal): Promise<void>;
}
