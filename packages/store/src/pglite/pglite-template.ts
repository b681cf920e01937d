import { createHash, randomBytes } from 'node:crypto';
import {
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { findAncestorWith } from '@chunklog/runtime/find-ancestor-with';

/** A PGlite data folder holds this file from its initdb on. */
const versionFile = 'PG_VERSION';

/** A template being made is `<template>.making-<pid>-<random>` until it is renamed into place. */
const makingInfix = '.making-';
const makingPattern = /\.making-(\d+)-[0-9a-f]+$/;

/** The installed PGlite's version: its data format, which a template must share. */
function pgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const packageFolder = findAncestorWith(dirname(entry), 'package.json');
  if (!packageFolder) throw new Error(`no package.json above ${entry}`);
  const { version } = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8')) as {
    version: string;
  };
  return version;
}

/** Names a template by the PGlite version and every migration file, so none stands in for another. */
export function pgliteTemplateName(migrationsFolder: string): string {
  const hash = createHash('sha256').update(pgliteVersion()).update('\0');
  const files = (folder: string, prefix = ''): string[] =>
    readdirSync(join(folder, prefix), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) =>
        entry.isDirectory() ? files(folder, join(prefix, entry.name)) : [join(prefix, entry.name)],
      );
  for (const file of files(migrationsFolder)) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(migrationsFolder, file)))
      .update('\0');
  }
  return `pglite-${hash.digest('hex').slice(0, 16)}`;
}

export interface SeedFromTemplateOptions {
  /** The data folder about to be opened. */
  dataDir: string;
  /** Where templates are kept, one folder each, made on first use. */
  templatesFolder: string;
  migrationsFolder: string;
  /** Initialises and migrates a new, empty data folder, then closes it. */
  makeTemplate(folder: string): Promise<void>;
}

/**
 * Seeds a data folder that has no database yet with a copy of a migrated template, made once
 * per PGlite version and set of migrations: PGlite's initdb and the first migration take
 * seconds, a copy of their result a fraction of that. Returns false (and leaves the folder to
 * PGlite's initdb) when the folder already holds a database.
 */
export async function seedFromTemplate(options: SeedFromTemplateOptions): Promise<boolean> {
  if (existsSync(join(options.dataDir, versionFile))) return false;
  removeAbandonedMakings(options.templatesFolder);
  const template = join(options.templatesFolder, pgliteTemplateName(options.migrationsFolder));
  if (!existsSync(join(template, versionFile))) {
    // Made beside its final place and renamed into it, so a template is whole or absent; two
    // processes making one at once both finish and the first rename wins.
    const making = `${template}${makingInfix}${process.pid}-${randomBytes(4).toString('hex')}`;
    mkdirSync(options.templatesFolder, { recursive: true });
    try {
      await options.makeTemplate(making);
      try {
        renameSync(making, template);
      } catch (error) {
        // Another process's template got there first: the same files, and it stays.
        if (!existsSync(join(template, versionFile))) throw error;
      }
    } finally {
      rmSync(making, { recursive: true, force: true });
    }
  }
  // PG_VERSION last: a copy cut short (a full disk) leaves a folder PGlite still initialises.
  // A reflink where the file system has them (btrfs, XFS, APFS): the copy shares the template's
  // blocks until either writes. Never a hard link: PGlite writes its files in place.
  const mode = constants.COPYFILE_FICLONE;
  cpSync(template, options.dataDir, {
    recursive: true,
    mode,
    filter: (source) => source !== join(template, versionFile),
  });
  cpSync(join(template, versionFile), join(options.dataDir, versionFile), { mode });
  return true;
}

/**
 * Removes the making-folders of processes that are gone (killed while making a template: their
 * `finally` never ran), so they do not pile up in the templates folder. A folder whose process
 * is alive, or may be (another user's: EPERM), stays. A process is looked up by its pid on this
 * machine, so a templates folder shared across PID namespaces (containers) must not be shared
 * while templates are made. Best effort: a folder that cannot be read or removed is left.
 */
function removeAbandonedMakings(templatesFolder: string): void {
  let names: string[];
  try {
    names = readdirSync(templatesFolder);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(makingPattern.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    try {
      rmSync(join(templatesFolder, name), { recursive: true, force: true });
    } catch {
      // Another process removing it at the same time, or no permission: left as it is.
    }
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
