import { type Command } from 'commander';
import { type Definitions } from './definition.js';

/** plat version, hidden. */
export function defineVersion(program: Command, the: Definitions): void {
  // gh version and kubectl version print the version: so does plat version, hidden (--version is the documented way).
  program
    .command('version', { hidden: true })
    .description('print the version (as plat --version)')
    .action((_flags, command: Command) => the.contextFor(command).io.out(`${the.version}\n`));
}
