import { Migration } from '@mikro-orm/migrations';

/** Organizations, members, invitations, teams and dynamic roles; the session's active organization and team (src/db/entities/organization.ts, docs/organizations.md). */
export class Migration20261205000000_organizations extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`organizations\` (\`id\` text not null, \`name\` text not null, \`slug\` text not null, \`logo\` text null, \`metadata\` text null, \`created_at\` datetime not null, primary key (\`id\`));`);
    this.addSql(`create unique index \`organizations_slug_unique\` on \`organizations\` (\`slug\`);`);
    this.addSql(`create table \`invitations\` (\`id\` text not null, \`organization_id\` text not null, \`email\` text not null, \`role\` text not null, \`team_id\` text null, \`status\` text not null, \`inviter_id\` text not null, \`expires_at\` datetime not null, \`created_at\` datetime not null, constraint \`invitations_organization_id_foreign\` foreign key(\`organization_id\`) references \`organizations\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`invitations_organization_id_index\` on \`invitations\` (\`organization_id\`);`);
    this.addSql(`create index \`invitations_organization_status_index\` on \`invitations\` (\`organization_id\`, \`status\`);`);
    this.addSql(`create index \`invitations_email_status_index\` on \`invitations\` (\`email\`, \`status\`);`);
    this.addSql(`create table \`organization_roles\` (\`id\` text not null, \`organization_id\` text not null, \`role\` text not null, \`permission\` text not null, \`created_at\` datetime not null, \`updated_at\` datetime null, constraint \`organization_roles_organization_id_foreign\` foreign key(\`organization_id\`) references \`organizations\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`organization_roles_organization_id_index\` on \`organization_roles\` (\`organization_id\`);`);
    this.addSql(`create unique index \`organization_roles_organization_role_unique\` on \`organization_roles\` (\`organization_id\`, \`role\`);`);
    this.addSql(`create table \`teams\` (\`id\` text not null, \`organization_id\` text not null, \`name\` text not null, \`created_at\` datetime not null, \`updated_at\` datetime null, constraint \`teams_organization_id_foreign\` foreign key(\`organization_id\`) references \`organizations\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`teams_organization_id_index\` on \`teams\` (\`organization_id\`);`);
    this.addSql(`create table \`team_members\` (\`id\` text not null, \`team_id\` text not null, \`user_id\` text not null, \`created_at\` datetime not null, constraint \`team_members_team_id_foreign\` foreign key(\`team_id\`) references \`teams\`(\`id\`) on delete cascade on update cascade, constraint \`team_members_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`team_members_team_id_index\` on \`team_members\` (\`team_id\`);`);
    this.addSql(`create index \`team_members_user_id_index\` on \`team_members\` (\`user_id\`);`);
    this.addSql(`create unique index \`team_members_team_user_unique\` on \`team_members\` (\`team_id\`, \`user_id\`);`);
    this.addSql(`create table \`members\` (\`id\` text not null, \`organization_id\` text not null, \`user_id\` text not null, \`role\` text not null, \`created_at\` datetime not null, constraint \`members_organization_id_foreign\` foreign key(\`organization_id\`) references \`organizations\`(\`id\`) on delete cascade on update cascade, constraint \`members_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`members_organization_id_index\` on \`members\` (\`organization_id\`);`);
    this.addSql(`create index \`members_user_id_index\` on \`members\` (\`user_id\`);`);
    this.addSql(`create index \`members_organization_created_at_id_index\` on \`members\` (\`organization_id\`, \`created_at\`, \`id\`);`);
    this.addSql(`create index \`members_organization_role_id_index\` on \`members\` (\`organization_id\`, \`role\`, \`id\`);`);
    this.addSql(`create unique index \`members_organization_user_unique\` on \`members\` (\`organization_id\`, \`user_id\`);`);
    this.addSql(`alter table \`sessions\` add column \`active_organization_id\` text null;`);
    this.addSql(`alter table \`sessions\` add column \`active_team_id\` text null;`);
    this.addSql(`create index \`sessions_active_organization_id_index\` on \`sessions\` (\`active_organization_id\`);`);
  }

}
