/**
 * A first-come first-served readers-writer lock: readers share it, a writer holds it alone, and
 * nobody passes someone who asked earlier (a stream of readers cannot starve a writer, nor the
 * reverse).
 */
export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly queue: Array<{ write: boolean; go: () => void }> = [];

  read<T>(fn: () => Promise<T>): Promise<T> {
    return this.with(false, fn);
  }

  write<T>(fn: () => Promise<T>): Promise<T> {
    return this.with(true, fn);
  }

  private async with<T>(write: boolean, fn: () => Promise<T>): Promise<T> {
    if (this.queue.length || !this.free(write)) await new Promise<void>((go) => this.queue.push({ write, go })); // taken for us by drain
    else this.take(write);
    try {
      return await fn();
    } finally {
      if (write) this.writer = false;
      else this.readers--;
      this.drain();
    }
  }

  private free(write: boolean): boolean {
    return !this.writer && (!write || this.readers === 0);
  }

  private take(write: boolean): void {
    if (write) this.writer = true;
    else this.readers++;
  }

  private drain(): void {
    while (this.queue.length && this.free(this.queue[0].write)) {
      const next = this.queue.shift()!;
      this.take(next.write);
      next.go();
    }
  }
}
