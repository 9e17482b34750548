import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TableSectionFilter } from '../src/engines/mysql-tables.ts';

const DUMP = [
  '-- MariaDB dump 10.19',
  '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;',
  '',
  '--',
  '-- Table structure for table `customers`',
  '--',
  '',
  'DROP TABLE IF EXISTS `customers`;',
  'CREATE TABLE `customers` (`id` int NOT NULL, PRIMARY KEY (`id`));',
  '--',
  '-- Dumping data for table `customers`',
  '--',
  'LOCK TABLES `customers` WRITE;',
  "/*!40000 ALTER TABLE `customers` DISABLE KEYS */;",
  "INSERT INTO `customers` VALUES (1),(2);",
  'UNLOCK TABLES;',
  '--',
  '-- Table structure for table `audit_log`',
  '--',
  'DROP TABLE IF EXISTS `audit_log`;',
  'CREATE TABLE `audit_log` (`id` int);',
  '--',
  '-- Dumping data for table `audit_log`',
  '--',
  'LOCK TABLES `audit_log` WRITE;',
  "INSERT INTO `audit_log` VALUES (7);",
  'UNLOCK TABLES;',
  '--',
  '-- Final view structure for view `customer_totals`',
  '--',
  'CREATE VIEW `customer_totals` AS SELECT 1;',
  '/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;',
  '-- Dump completed',
  '',
].join('\n');

async function filtered(tables: string[], chunkSize: number): Promise<string> {
  const chunks: Buffer[] = [];
  const bytes = Buffer.from(DUMP);
  const source = Readable.from(Array.from({ length: Math.ceil(bytes.length / chunkSize) }, (_, i) => bytes.subarray(i * chunkSize, (i + 1) * chunkSize)));
  for await (const chunk of source.pipe(new TableSectionFilter(tables))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('TableSectionFilter', () => {
  it.each([1, 7, 64, 100_000])('keeps the sections of the tables asked for and the session settings (chunks of %i bytes)', async (size) => {
    const out = await filtered(['audit_log'], size);
    expect(out).toContain('CREATE TABLE `audit_log`');
    expect(out).toContain('INSERT INTO `audit_log` VALUES (7);');
    expect(out).not.toContain('`customers`');
    expect(out).not.toContain('CREATE VIEW');
    expect(out).toContain('SET @OLD_CHARACTER_SET_CLIENT');
    expect(out).toContain('SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT');
  });

  it('accepts database-qualified names and keeps several tables', async () => {
    const out = await filtered(['shop.customers', 'audit_log'], 13);
    expect(out).toContain('INSERT INTO `customers` VALUES (1),(2);');
    expect(out).toContain('ALTER TABLE `customers` DISABLE KEYS');
    expect(out).toContain('INSERT INTO `audit_log` VALUES (7);');
  });
});
