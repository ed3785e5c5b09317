-- Custom SQL migration file, put your code below! --
CREATE EXTENSION IF NOT EXISTS idgen;
