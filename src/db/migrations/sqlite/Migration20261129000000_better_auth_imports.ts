import { Migration } from '@mikro-orm/migrations';

/** The ledger of `portcullis import better-auth`: which better-auth rows were imported (src/db/entities/better-auth-import.ts). */
export class Migration20261129000000_better_auth_imports extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`better_auth_imports\` (\`source_table\` text not null, \`source_id\` text not null, \`imported_at\` datetime not null, primary key (\`source_table\`, \`source_id\`));`);
  }

}
