/** Where a command or the demo writes what the user reads (stdout in production, a buffer in tests). */
export interface Output {
  write(text: string): void;
}
